"""The shipped JSON Schema accepts every model we ship and rejects what the loader rejects."""
from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import jsonschema
import pytest
from ruamel.yaml import YAML

from verifier.lang import SCHEMA_PATH

ROOT = Path(__file__).parent.parent
MODELS = sorted(ROOT.glob("models/*.yaml")) + sorted(ROOT.glob("examples/models/*.yaml")) + \
    sorted((ROOT / "tests").rglob("fixtures/**/*.yaml"))


@functools.cache
def validator():
    """The schema, checked once and its validator built once per process (40 ms each time)."""
    schema = json.loads(Path(SCHEMA_PATH).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def is_model(data) -> bool:
    """A parsed model file (a property file has `claims:`)."""
    return isinstance(data, dict) and "model" in data and "claims" not in data


def looks_like_a_model(path: Path) -> bool:
    """A model file by its text, a top-level `model:` and no top-level `claims:`: at collection, where
    parsing the 80 files took 1.5 s of CPU in every worker (each test checks it parsed, and
    test_the_files_left_out_are_no_models the rest)."""
    text = path.read_text(encoding="utf-8")
    return re.search(r"^model:", text, re.M) is not None and re.search(r"^claims:", text, re.M) is None


@pytest.mark.parametrize("path", [p for p in MODELS if looks_like_a_model(p)], ids=lambda p: p.name)
def test_schema_accepts_models(path):
    data = YAML(typ="safe").load(path.read_text())
    assert is_model(data)
    errors = list(validator().iter_errors(data))
    assert not errors, [e.message for e in errors]


def test_the_files_left_out_are_no_models():
    left_out = [p for p in MODELS if not looks_like_a_model(p)]
    assert left_out and not [p.name for p in left_out if is_model(YAML(typ="safe").load(p.read_text()))]


def test_schema_rejects_unknown_fields():
    bad = {"model": "x", "playerz": 2, "variables": {"v": {"type": "bool", "intt": 0}}}
    messages = [e.message for e in validator().iter_errors(bad)]
    assert any("playerz" in m for m in messages) and any("intt" in m for m in messages)


def test_schema_and_loader_know_the_same_fields():
    from verifier.lang.loader import ACTION_KEYS, PARAM_KEYS, TOP_KEYS, VAR_KEYS
    from verifier.lang.phases import PHASE_KEYS
    schema = json.loads(Path(SCHEMA_PATH).read_text())
    variable = schema["properties"]["variables"]["additionalProperties"]["oneOf"][1]
    param = schema["properties"]["params"]["additionalProperties"]
    param = next(p for p in param.get("oneOf", [param]) if p.get("type") == "object")
    assert set(schema["properties"]) == set(TOP_KEYS)
    assert set(schema["properties"]["actions"]["items"]["properties"]) == set(ACTION_KEYS)
    assert set(variable["properties"]) == set(VAR_KEYS)
    assert set(param["properties"]) == set(PARAM_KEYS)
    assert set(schema["$defs"]["phase"]["properties"]) == set(PHASE_KEYS)


def test_every_field_is_described():
    schema = json.loads(Path(SCHEMA_PATH).read_text())
    missing = []

    def walk(node, where):
        if isinstance(node, dict):
            for key, sub in node.get("properties", {}).items():
                if isinstance(sub, dict) and "description" not in sub and "$ref" not in sub:
                    missing.append(f"{where}.{key}")
            for key, sub in node.items():
                walk(sub, f"{where}.{key}" if key not in ("properties", "items", "$defs") else where)
        elif isinstance(node, list):
            for sub in node:
                walk(sub, where)

    walk(schema, "model")
    assert not missing
