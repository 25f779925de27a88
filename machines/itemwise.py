"""JSON Schema validation of a document whose schema applies one subschema to each item of an array,
one distinct item at a time.

``cases lint`` validates every step of every case against its machine's case schema, and every
entry of every fixture against the fixture schema. Steps and entries repeat across cases (the
bundled cases hold about 5,000 steps, 2,400 of them distinct), and jsonschema takes a tenth of a
millisecond or more per item, so most of the linter's time went to validating the same item again.

:class:`ItemwiseValidator` splits the schema in two: the *frame*, the schema with the array's
``items`` taken out, validated once per document, and the *item schema*, validated once per
distinct item (remembered by :func:`~inboxspec.machines.interface.json_key`, which tells apart
every two JSON values the validator can).

Each part is validated twice over where that is faster: by fastjsonschema's code generated from it
(``schema_dialect.fast_validator``), which accepts exactly what jsonschema accepts, and by jsonschema
only where the first refuses, for the report of each error. Most documents and items are valid, and
the first pass took the linter's time down by about a third.

This is exact for a schema whose array items stand alone, and the validator refuses any other
(:func:`why_items_do_not_stand_alone`). ``items`` applies its subschema to each element on its
own, so an element's errors depend on nothing but the element, and every other keyword of the
schema is still in the frame. Two things could break that, and are refused:
- a keyword that makes an element's errors depend on more than the element: ``prefixItems``,
  which shifts where ``items`` starts; ``unevaluatedItems``, which reads what ``items``
  evaluated; a reference other than to the root's ``$defs`` (which the item schema carries with
  it); a dynamic reference or anchor;
- another subschema that also reaches the array: its errors would tie with an item's at one
  path, in another order.

A ``narrow`` function may give, per item, a smaller item schema with exactly the same errors for
that item (the case schema's rule for the step's own event, say); it is the caller's to show.
``tests/test_itemwise.py`` compares every error of this validator with jsonschema's own over the
whole schema, on every bundled case and fixture and on broken ones.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Hashable, Mapping
from typing import Any

import jsonschema

from inboxspec.machines.interface import json_key, rememberable
from inboxspec.machines.schema_dialect import fast_validator, validator_for

# An error as the callers report it: its path in the document (as jsonschema's
# ``absolute_path``) and its message.
Error = tuple[tuple[str | int, ...], str]

# The keywords that carry a schema's resources: an item schema validated on its own keeps them, so
# that a ``$ref`` in it resolves as it did in the whole schema.
_ROOT_KEYWORDS = ("$schema", "$id", "$defs")
_REMEMBERED = 16_384  # items remembered per validator before the memo starts again


class ItemwiseValidator:
    """Validates documents against ``schema`` whose ``properties[array]`` is an array schema with
    ``items``; :meth:`errors` gives what ``iter_errors`` over the whole schema gives, sorted by path."""

    def __init__(self, schema: Mapping[str, Any], array: str,
                 narrow: Callable[[Any, Mapping[str, Any]], tuple[Hashable, Mapping[str, Any]]] | None = None
                 ) -> None:
        """``narrow(item, item_schema)``, if given, returns a key and a schema that gives ``item``
        exactly the errors ``item_schema`` gives it: the item is then validated against that schema
        (one validator per key)."""
        why = why_items_do_not_stand_alone(schema, array)
        if why is not None:
            raise ValueError(f"cannot validate properties.{array}'s items one at a time: {why}")
        array_schema = schema["properties"][array]
        frame = {**schema, "properties": {**schema["properties"],
                                          array: {k: v for k, v in array_schema.items() if k != "items"}}}
        self._frame = validator_for(frame)
        self._frame_accepts = fast_validator(frame)  # the first pass (None where unavailable)
        self._array = array
        self._root = {k: schema[k] for k in _ROOT_KEYWORDS if k in schema}
        self._item_schema: Mapping[str, Any] = array_schema["items"]
        self._narrow = narrow
        # Per narrowed key: fastjsonschema's accept-or-refuse (None where unavailable), and jsonschema's
        # validator, which reports the errors of an item the first refuses.
        self._item_validators: dict[Hashable, tuple[Callable[[Any], bool] | None,
                                                   jsonschema.Draft202012Validator]] = {}
        self._known: dict[Any, list[Error]] = {}

    def errors(self, document: Any, limit: int | None = None,
               keep: Callable[[tuple[str | int, ...]], bool] | None = None) -> list[Error]:
        """Every error of ``document`` against the whole schema (those at a path ``keep`` keeps, when
        given), sorted by path; with ``limit``, the first ``limit`` found (the frame's, then each
        item's in order), sorted by path. A document can hold an error per two bytes, and listing
        them all took gigabytes."""
        found: list[Error] = []
        if self._frame_accepts is None or not self._frame_accepts(document):
            frame = ((tuple(e.absolute_path), e.message) for e in self._frame.iter_errors(document))
            found += itertools.islice((error for error in frame if keep is None or keep(error[0])), limit)
        items = document.get(self._array) if isinstance(document, dict) else None
        if isinstance(items, list):
            for index, item in enumerate(items):
                if limit is not None and len(found) >= limit:
                    break
                for path, message in self._item_errors(item):
                    at = (self._array, index, *path)
                    if keep is None or keep(at):
                        found.append((at, message))
        # Sorted as the callers sorted iter_errors over the whole schema (stable: errors at one path
        # keep their order, and those all come from the frame or all from one item).
        return sorted(found[:limit], key=lambda error: [str(part) for part in error[0]])

    def _item_errors(self, item: Any) -> list[Error]:
        key = json_key(item)
        known = self._known.get(key) if key is not None else None
        if known is not None:
            return known
        narrowed_key, schema = (None, self._item_schema) if self._narrow is None \
            else self._narrow(item, self._item_schema)
        validators = self._item_validators.get(narrowed_key)
        if validators is None:
            whole = {**self._root, **schema}
            validators = self._item_validators[narrowed_key] = (fast_validator(whole), validator_for(whole))
        fast, validator = validators
        found = [] if fast is not None and fast(item) else \
            [(tuple(e.absolute_path), e.message) for e in validator.iter_errors(item)]
        if key is not None and rememberable(item):  # see json_key's WARNING
            if len(self._known) >= _REMEMBERED:
                self._known.clear()
            self._known[key] = found
        return found


# Keywords whose values are data, not subschemas: the walk below does not look inside them.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
_DYNAMIC_KEYWORDS = ("$dynamicRef", "$dynamicAnchor", "$anchor", "$recursiveRef", "$recursiveAnchor")


def why_items_do_not_stand_alone(schema: Mapping[str, Any], array: str) -> str | None:
    """Why ``properties[array].items`` of ``schema`` cannot be validated one item at a time, or None.

    Deliberately conservative: it may refuse a schema that would split exactly, never the reverse.
    """
    properties = schema.get("properties")
    array_schema = properties.get(array) if isinstance(properties, Mapping) else None
    if not isinstance(array_schema, Mapping) or "items" not in array_schema:
        return f"the schema has no properties.{array}.items"
    for keyword in ("prefixItems", "unevaluatedItems"):
        if keyword in array_schema:
            return f"properties.{array} has {keyword}"
    items = array_schema["items"]
    if isinstance(items, Mapping) and "$defs" in items:
        return "the item schema has $defs of its own"
    root_patterns = schema.get("patternProperties", {})
    if isinstance(root_patterns, Mapping) and any(re.search(p, array) for p in root_patterns):
        return f"patternProperties also reaches {array}"
    nodes: list[Any] = [schema]
    while nodes:
        node = nodes.pop()
        if isinstance(node, list):
            nodes.extend(node)
            continue
        if not isinstance(node, Mapping):
            continue
        for keyword in _DYNAMIC_KEYWORDS:
            if keyword in node:
                return f"it uses {keyword}"
        if "$id" in node and node is not schema:
            return "a subschema has an $id of its own"
        reference = node.get("$ref")
        if reference is not None and not (isinstance(reference, str) and reference.startswith("#/$defs/")):
            return f"$ref {reference!r} does not name one of the root's $defs"
        inner = node.get("properties")
        if node is not schema and isinstance(inner, Mapping) and array in inner:
            return f"another subschema also speaks of properties.{array}"
        nodes.extend(value for key, value in node.items() if key not in _DATA_KEYWORDS)
    return None


def json_path(path: tuple[str | int, ...]) -> str:
    """A path as jsonschema's ``json_path`` writes it (``$.steps[0].args``)."""
    return jsonschema.ValidationError("", path=path).json_path
