"""jsonschema's validation errors restated for users: the key's problem and what is allowed."""

from __future__ import annotations

import jsonschema

# The schemas end every pattern in `$(?!\n)` (their header says why); users read it as `$`.
_END_GUARD = "$(?!\\n)"


def readable_pattern(pattern: str) -> str:
    return pattern.replace(_END_GUARD, "$")


def describe(error: jsonschema.ValidationError) -> str:
    """The problem of one error, without its key path."""
    if error.validator == "pattern":
        pattern = readable_pattern(error.validator_value)
        if "propertyNames" in error.relative_schema_path:
            return f"name {error.instance!r} is not allowed: it must match {pattern!r}"
        return f"{error.instance!r} does not match {pattern!r}"
    if error.validator == "additionalProperties":
        allowed = ", ".join(error.schema.get("properties", {}))
        return f"{error.message}; allowed: {allowed}" if allowed else error.message
    if error.validator == "required":
        absent = [name for name in error.validator_value if name not in error.instance]
        values = (
            error.schema.get("properties", {}).get(absent[0], {}).get("enum") if absent else None
        )
        if values:
            return f"{error.message}; allowed: {', '.join(map(str, values))}"
    return error.message
