#!/usr/bin/env python3
"""Validates `memwatch probe --json` documents against docs/probe.schema.json.

usage: validate_probe.py SCHEMA FILE...   (exit 0: all valid, 1: a document is invalid)
With --expect-invalid every FILE must be rejected (proves the schema can fail).
"""
import json
import sys

import jsonschema


def main(argv):
    expect_invalid = "--expect-invalid" in argv
    args = [a for a in argv[1:] if a != "--expect-invalid"]
    with open(args[0]) as f:
        schema = json.load(f)
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema)
    bad = 0
    for path in args[1:]:
        with open(path) as f:
            doc = json.load(f)
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
        if expect_invalid:
            if not errors:
                print(f"{path}: accepted, but it should have been rejected")
                bad += 1
            else:
                print(f"{path}: rejected as expected: {errors[0].message}")
        else:
            for e in errors:
                print(f"{path}: {'/'.join(map(str, e.path))}: {e.message}")
            bad += bool(errors)
            if not errors:
                print(f"{path}: valid")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
