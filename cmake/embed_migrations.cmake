# Writes OUTPUT, a C file holding every migrations/NNNN_name.sql in name
# order as byte arrays, so the daemon needs no files beside it to build its
# schema.  Run at build time: cmake -DSRC_DIR=... -DOUTPUT=... -P this.
file(GLOB files RELATIVE ${SRC_DIR} ${SRC_DIR}/[0-9][0-9][0-9][0-9]_*.sql)
list(SORT files)
set(body "/* Generated from migrations/ by cmake/embed_migrations.cmake. */\n#include \"migrate.h\"\n\n")
set(table "")
set(i 0)
foreach(f ${files})
  file(READ ${SRC_DIR}/${f} hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(APPEND body "static const char m${i}[] = {${bytes}0x00};\n")
  string(APPEND table "    {\"${f}\", m${i}},\n")
  math(EXPR i "${i} + 1")
endforeach()
string(APPEND body "\nconst struct migration migrations[] = {\n${table}};\nconst int migration_count = ${i};\n")
file(WRITE ${OUTPUT}.tmp "${body}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUTPUT}.tmp ${OUTPUT})
