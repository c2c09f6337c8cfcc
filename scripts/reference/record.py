# SPDX-License-Identifier: BSD-3-Clause
"""docs/reference/record.md from schema/record.schema.json: every field of
the JSON record as a dotted path (arrays as `[]`, open maps as `<name>`),
with its type, whether it is required and its description, in the
schema's own order."""

import json

from . import md


def _resolve(schema, node):
    """Follows "$ref" (local ones only: the schema has no other)."""
    while "$ref" in node:
        node = _at(schema, node["$ref"])
    return node


def _at(schema, ref):
    node = schema
    for part in ref.lstrip("#/").split("/"):
        node = node[part]
    return node


def _type(schema, node):
    """The field's type in words: "integer", "string or null", "one of ..."."""
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        target = _resolve(schema, node)
        return _type(schema, target) if target.get("type") != "object" else f"object ({name})"
    if "const" in node:
        return f"constant {json.dumps(node['const'])}"
    if "enum" in node:
        return "one of " + ", ".join(json.dumps(v) for v in node["enum"])
    for alt in ("oneOf", "anyOf"):
        if alt in node:
            return " or ".join(_type(schema, n) for n in node[alt])
    t = node.get("type", "any")
    if isinstance(t, list):
        return " or ".join(t)
    if t == "array" and "items" in node:
        return f"array of {_type(schema, node['items'])}"
    return t


def _description(schema, node):
    """The field's own description, else its definition's."""
    if "description" in node:
        return node["description"]
    for alt in ("oneOf", "anyOf"):
        for n in node.get(alt, ()):
            if "description" in _resolve(schema, n):
                return _resolve(schema, n)["description"]
    return _resolve(schema, node).get("description", "") if "$ref" in node else ""


def _objects(schema, node):
    """The object schemas a field may be (a oneOf with null has one)."""
    node = _resolve(schema, node)
    alts = node.get("oneOf") or node.get("anyOf")
    if alts:
        return [o for n in alts for o in _objects(schema, n)]
    types = node.get("type")
    is_obj = types == "object" or (isinstance(types, list) and "object" in types)
    return [node] if is_obj or "properties" in node else []


def _fields(schema, node, path, rows, chain):
    """Appends (path, type, required, description) for every field below node."""
    for obj in _objects(schema, node):
        required = set(obj.get("required", ()))
        for name, sub in obj.get("properties", {}).items():
            _field(schema, sub, f"{path}.{name}" if path else name, name in required, rows, chain)
        for pattern, sub in obj.get("patternProperties", {}).items():
            _field(schema, sub, f"{path}.<key matching {pattern}>", False, rows, chain)
        extra = obj.get("additionalProperties")
        if isinstance(extra, dict):
            _field(schema, extra, f"{path}.<name>", False, rows, chain)


def _field(schema, sub, path, required, rows, chain):
    rows.append((path, _type(schema, sub), required, _description(schema, sub)))
    ref = sub.get("$ref")
    if ref in chain:  # a definition inside itself: listed once
        return
    inner = _resolve(schema, sub)
    if inner.get("type") == "array" and "items" in inner:
        _fields(schema, inner["items"], f"{path}[]", rows, chain | {ref})
    else:
        _fields(schema, sub, path, rows, chain | {ref})


def _section(schema, title, ref, intro):
    rows = []
    _fields(schema, {"$ref": ref}, "", rows, frozenset({ref}))
    cells = [(md.code(p), md.text(t), "yes" if r else "no", md.text(d)) for p, t, r, d in rows]
    body = md.table(("Field", "Type", "Required", "Description"), cells)
    return f"## {title}\n\n{intro}\n\n{body}\n"


def page(schema):
    """The page's text: the run record, the ceiling tool's, the mix's."""
    out = md.header("The JSON record", "schema/record.schema.json")
    out += md.text(schema.get("title", "")) + "\n\n"
    out += md.text(schema.get("description", "")) + "\n\n"
    out += (
        "Each table lists every field as a dotted path: `a.b` is field b of object a, "
        "`a[]` an element of array a, `<name>` any key of an open map.\n\n"
    )
    out += _section(
        schema,
        "Run record",
        "#/$defs/run_record",
        "Written by every kernel run given `--json FILE`.",
    )
    out += _section(
        schema,
        "Ceiling record",
        "#/$defs/ceiling_record",
        'Written by `iokernels ceiling --json FILE` (`"kernel": "ceiling"`).',
    )
    out += _section(
        schema,
        "Mix record",
        "#/$defs/mix_record",
        'Written by `iokernels mix --json FILE` (`"kernel": "mix"`; see '
        "[Workload mixes](../mixes.md)); each member run's own record is a run record.",
    )
    return out
