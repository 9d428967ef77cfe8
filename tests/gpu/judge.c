/*
 * judge.c - gpubench-judge: the daemon's validity verdict
 * (common/validity.c) on runs the worker printed with `run ... --json`,
 * without a daemon, for the GPU checks.
 *
 *   gpubench-judge FILE...
 *
 * Prints one line a file: the file name and the verdict as JSON.  Exits 0
 * when every run is valid (true or null), 1 when one is not, 2 when a file
 * cannot be read or is not {"result": ..., "meta": ...}.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "validity.h"

/* The whole of path as a NEW string (caller frees); NULL on failure. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    long size;

    if (f == NULL)
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
        goto out;
    text = malloc((size_t)size + 1);
    if (text == NULL)
        goto out;
    if (fread(text, 1, (size_t)size, f) != (size_t)size) {
        free(text);
        text = NULL;
        goto out;
    }
    text[size] = '\0';
out:
    fclose(f);
    return text;
}

int main(int argc, char **argv)
{
    int rc = 0;

    for (int i = 1; i < argc; i++) {
        char *text = slurp(argv[i]), *printed = NULL;
        cJSON *run = text ? cJSON_Parse(text) : NULL, *verdict = NULL;
        const cJSON *result = cJSON_GetObjectItemCaseSensitive(run, "result");

        if (cJSON_IsObject(result))
            verdict = gb_validity_judge(result, cJSON_GetObjectItemCaseSensitive(run, "meta"));
        if (verdict != NULL)
            printed = cJSON_PrintUnformatted(verdict);
        if (printed == NULL) {
            fprintf(stderr, "gpubench-judge: %s: not a run printed by `run --json`\n", argv[i]);
            rc = 2;
        } else {
            printf("%s %s\n", argv[i], printed);
            if (gb_validity_flag(verdict) == 0 && rc == 0)
                rc = 1;
        }
        free(printed);
        cJSON_Delete(verdict);
        cJSON_Delete(run);
        free(text);
    }
    return rc;
}
