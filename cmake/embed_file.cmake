# Writes OUTPUT, a C file holding INPUT's bytes as the array NAME (NUL
# ended) and its length as NAME_len, so the daemon serves a file of the
# source tree (api/openapi.json) without files beside it.  Run at build
# time: cmake -DINPUT=... -DOUTPUT=... -DNAME=... -P this.
file(READ ${INPUT} hex HEX)
file(SIZE ${INPUT} size)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUTPUT}.tmp "/* Generated from ${INPUT} by cmake/embed_file.cmake. */\n#include <stddef.h>\n\nconst char ${NAME}[] = {${bytes}0x00};\nconst size_t ${NAME}_len = ${size};\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUTPUT}.tmp ${OUTPUT})
