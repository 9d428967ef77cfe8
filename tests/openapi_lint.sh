#!/bin/sh
# tests/openapi_lint.sh SRC BUILD: Redocly's OpenAPI linter (npm,
# @redocly/cli pinned by api/lint/package-lock.json) on api/openapi.json.
# It is installed with `npm ci` into BUILD/openapi-lint (npm's cache there
# too), once per lock file.  Skipped (exit 77), saying why, where npm is
# missing or the registry cannot be reached.
set -u
src=$1
build=$2
mkdir -p "$build/openapi-lint" || exit 1
dir=$(cd "$build/openapi-lint" && pwd) || exit 1
if ! command -v npm >/dev/null 2>&1; then
    echo "openapi_lint: SKIPPED: npm is not installed (apt-get install npm)"
    exit 77
fi

if ! cmp -s "$src/api/lint/package-lock.json" "$dir/package-lock.json" ||
   [ ! -x "$dir/node_modules/.bin/redocly" ]; then
    cp "$src/api/lint/package.json" "$src/api/lint/package-lock.json" "$dir/" || exit 1
    if ! (cd "$dir" && npm ci --no-audit --no-fund --cache "$dir/npm-cache" \
              >"$dir/npm-ci.log" 2>&1); then
        tail -5 "$dir/npm-ci.log"
        rm -f "$dir/package-lock.json"
        echo "openapi_lint: SKIPPED: npm ci could not install @redocly/cli" \
             "(no registry?); see $dir/npm-ci.log"
        exit 77
    fi
fi
cd "$src" || exit 1
exec "$dir/node_modules/.bin/redocly" lint --config api/lint/redocly.yaml api/openapi.json
