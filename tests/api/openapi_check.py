"""Checks each answer gpubenchd gives the API tests against api/openapi.json.

The harness (harness.py) calls check() on every answer it receives from a
daemon it started, so the document stays true: an answer for a path, method
or status the document does not list, or a JSON body its schema refuses,
fails the test.  A path the document does not list must be answered 404, and
a method a listed path does not take 405 with Allow, both with the error
object (the document says so; OpenAPI cannot list the paths that are not
there).  HEAD is checked as GET without a body.

JSON Schema validation is python3-jsonschema (Debian); OpenAPI 3.1 schemas
are JSON Schema 2020-12.  The whole document is the validator's root schema
with a "$ref" to the response's schema, so "#/components/..." references
resolve without a resolver (the same code on jsonschema 4.10 and 4.2x).
"""
import atexit
import json
import os
import re
import sys

import jsonschema

SPEC_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "api",
                         "openapi.json")
with open(SPEC_PATH) as f:
    SPEC = json.load(f)

METHODS = ("get", "put", "post", "delete", "patch", "options", "head")


def _template_regex(template):
    parts = re.split(r"(\{[^}]+\})", template)
    return re.compile("^" + "".join("[^/]+" if p.startswith("{") else re.escape(p)
                                    for p in parts) + "$")


# The most literal template first: /runs/{id}.csv before /runs/{id},
# /runs/import before /runs/{id} (the router's table is in that order too).
TEMPLATES = sorted(((t, _template_regex(t)) for t in SPEC["paths"]),
                   key=lambda tr: -len(re.sub(r"\{[^}]+\}", "", tr[0])))
_validators = {}
violations = []


def _pointer(*parts):
    return "#/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _validate(pointer, instance):
    v = _validators.get(pointer)
    if v is None:
        root = dict(SPEC)
        root["$ref"] = pointer
        v = _validators[pointer] = jsonschema.Draft202012Validator(root)
    errors = sorted(v.iter_errors(instance), key=lambda e: list(e.absolute_path))
    return ["%s at %s" % (e.message[:300], "/".join(map(str, e.absolute_path)) or "(root)")
            for e in errors[:3]]


def _error_body(status, ctype, body):
    if ctype != "application/json":
        return ["a %d answer with Content-Type %r, not the error object" % (status, ctype)]
    try:
        doc = json.loads(body)
    except ValueError as e:
        return ["a %d answer that is not JSON: %s" % (status, e)]
    return _validate(_pointer("components", "schemas", "Error"), doc)


def problems(method, path, status, headers, body):
    """What is wrong with this answer, as a list of sentences (empty: none)."""
    path = path.split("?", 1)[0]
    method = method.lower()
    head = method == "head"
    if head:
        method = "get"
    ctype = (headers.get("content-type") or "").split(";")[0].strip()
    matching = [(t, r) for t, r in TEMPLATES if r.match(path)]
    if not matching:
        if status != 404:
            return ["%s is not in the document, yet was answered %d" % (path, status)]
        return [] if head else _error_body(status, ctype, body)
    with_method = [t for t, _ in matching if method in SPEC["paths"][t]]
    if not with_method:
        if status != 405 or "allow" not in headers:
            return ["%s %s: the document does not list this method, yet the answer is %d%s" %
                    (method.upper(), matching[0][0], status,
                     "" if "allow" in headers else " without Allow")]
        return [] if head else _error_body(status, ctype, body)
    template = with_method[0]
    op = SPEC["paths"][template][method]
    answer = op["responses"].get(str(status), op["responses"].get("default"))
    if answer is None:
        return ["%s %s: status %d is not documented (documented: %s)" %
                (method.upper(), template, status, ", ".join(sorted(op["responses"])))]
    if "$ref" in answer:
        name = answer["$ref"].rsplit("/", 1)[1]
        answer = SPEC["components"]["responses"][name]
    content = answer.get("content")
    if not content:
        if body:
            return ["%s %s %d: documented without a body, yet has %d bytes" %
                    (method.upper(), template, status, len(body))]
        return []
    if ctype not in content:
        return ["%s %s %d: Content-Type %r is not documented (documented: %s)" %
                (method.upper(), template, status, ctype, ", ".join(content))]
    if head or ctype != "application/json":
        return []
    try:
        doc = json.loads(body)
    except ValueError as e:
        return ["%s %s %d: the body is not JSON: %s" % (method.upper(), template, status, e)]
    resp_key = str(status) if str(status) in op["responses"] else "default"
    raw = op["responses"][resp_key]
    if "$ref" in raw:
        where = ("components", "responses", raw["$ref"].rsplit("/", 1)[1])
    else:
        where = ("paths", template, method, "responses", resp_key)
    return ["%s %s %d: %s" % (method.upper(), template, status, p)
            for p in _validate(_pointer(*where, "content", ctype, "schema"), doc)]


def check(method, path, status, headers, body):
    """Raises AssertionError when the answer is not as documented.  Also
    remembers it, so that one a thread met still fails the test process."""
    found = problems(method, path, status, {k.lower(): v for k, v in headers}, body)
    if found:
        msg = "answer not as api/openapi.json documents it (%s %s -> %d): %s\n  body: %s" % (
            method, path, status, "; ".join(found), body[:400])
        violations.append(msg)
        raise AssertionError(msg)


@atexit.register
def _fail_on_violations():
    if violations:
        sys.stderr.write("\nopenapi_check: %d answer(s) not as documented:\n  %s\n" %
                         (len(violations), "\n  ".join(violations[:20])))
        sys.stderr.flush()
        os._exit(1)
