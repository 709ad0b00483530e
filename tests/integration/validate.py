#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Validates one JSON document against one of rcgate's JSON Schemas.

usage: validate.py SCHEMA_DIR SCHEMA_NAME < document.json
       validate.py --check SCHEMA_DIR

SCHEMA_NAME is a file name in SCHEMA_DIR with or without ".json". $refs
are resolved from SCHEMA_DIR only (by $id); anything else is an error, so
validation never touches the network. Exit 0 if valid; 1 with one line
per error on stderr if not; 2 on usage or schema errors. --check checks
every schema in SCHEMA_DIR against its meta-schema and its $id against
its file name.

Needs Debian's python3-jsonschema, so run it with /usr/bin/python3.
"""
import json
import os
import sys

import jsonschema

ID_PREFIX = "https://rcgate.invalid/schemas/"


def load_store(schema_dir):
    """All schemas in schema_dir by $id, and by file name."""
    by_id, by_name = {}, {}
    for name in sorted(os.listdir(schema_dir)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(schema_dir, name), encoding="utf-8") as f:
            try:
                schema = json.load(f)
            except ValueError as e:
                raise SystemExit(f"validate.py: {name}: not JSON: {e}")
        sid = schema.get("$id")
        if sid is None:
            raise SystemExit(f"validate.py: {name}: no $id")
        by_id[sid] = schema
        by_name[name] = schema
    return by_id, by_name


def refuse(uri):
    raise jsonschema.exceptions.RefResolutionError(
        f"$ref to {uri} is not a schema in the schema directory")


def validator_for(schema, store):
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    resolver = jsonschema.RefResolver(
        base_uri=schema["$id"], referrer=schema, store=store,
        handlers={"http": refuse, "https": refuse, "file": refuse,
                  "ftp": refuse})
    return cls(schema, resolver=resolver)


def path_of(error):
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}"
                         for p in error.absolute_path)


def check_all(schema_dir):
    by_id, by_name = load_store(schema_dir)
    bad = 0
    for name, schema in by_name.items():
        try:
            jsonschema.validators.validator_for(schema).check_schema(schema)
        except jsonschema.exceptions.SchemaError as e:
            print(f"{name}: {e.message} at {list(e.absolute_path)}",
                  file=sys.stderr)
            bad += 1
        if schema["$id"] != ID_PREFIX + name:
            print(f"{name}: $id is {schema['$id']}, expected "
                  f"{ID_PREFIX + name}", file=sys.stderr)
            bad += 1
    return 1 if bad else 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--check":
        return check_all(argv[2])
    if len(argv) != 3:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    schema_dir, name = argv[1], argv[2]
    if not name.endswith(".json"):
        name += ".json"
    by_id, by_name = load_store(schema_dir)
    if name not in by_name:
        print(f"validate.py: no schema {name} in {schema_dir}",
              file=sys.stderr)
        return 2
    try:
        doc = json.load(sys.stdin)
    except ValueError as e:
        print(f"input is not JSON: {e}", file=sys.stderr)
        return 1
    try:
        v = validator_for(by_name[name], by_id)
        errors = sorted(v.iter_errors(doc), key=lambda e: list(e.path))
    except (jsonschema.exceptions.SchemaError,
            jsonschema.exceptions.RefResolutionError) as e:
        print(f"validate.py: schema {name}: {e}", file=sys.stderr)
        return 2
    for e in errors:
        # anyOf/oneOf say only "not valid under any": name the closest miss.
        if e.context:
            e = jsonschema.exceptions.best_match(e.context)
        print(f"{name}: {path_of(e)}: {e.message}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
