"""IR text and plan JSON from outside: bad input gives a ParseError naming what is wrong, never a raw exception."""

import json
import sys
from pathlib import Path

import pytest

import tilelang as tl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import designs  # noqa: E402


@pytest.fixture(scope="module")
def vmul():
    return designs.vector_scalar_mul()


@pytest.fixture(scope="module")
def plan_json(vmul):
    return tl.plan(vmul, strategy="greedy").to_json()


@pytest.mark.parametrize("text, message", [
    ("{nope", r"line 1, column 2: plan JSON: Expecting property name"),
    ("{}", r"plan JSON lacks \['design', 'placement', 'link_tiles', 'fifos', 'buffers', 'routes', 'solves'\]"),
    ("[1, 2]", r"plan JSON must be an object with keys .*, got list"),
])
def test_plan_from_json_rejects_what_is_not_a_plan(text, message):
    with pytest.raises(tl.ParseError, match=message):
        tl.Plan.from_json(text)


def test_plan_from_json_names_the_malformed_entry(plan_json):
    doc = json.loads(plan_json)
    doc["fifos"]["a_in"].pop("producer")
    with pytest.raises(tl.ParseError, match=r"plan JSON: fifos\['a_in'\] is malformed \(missing key 'producer'\)"):
        tl.Plan.from_json(json.dumps(doc))
    doc = json.loads(plan_json)
    doc["placement"]["worker"] = [0]
    with pytest.raises(tl.ParseError, match=r"placement\['worker'\] is malformed \(a tile is \[col, row\] of ints, got \[0\]\)"):
        tl.Plan.from_json(json.dumps(doc))
    doc["placement"]["worker"] = ["0", 2]  # not turned into 0 behind the user's back
    with pytest.raises(tl.ParseError, match=r"placement\['worker'\] is malformed \(a tile is \[col, row\] of ints"):
        tl.Plan.from_json(json.dumps(doc))


def test_plan_from_json_reads_a_path(plan_json, tmp_path):
    f = tmp_path / "p.json"
    f.write_text(plan_json)
    assert tl.Plan.from_json(f).to_json() == plan_json
    with pytest.raises(tl.ParseError, match="cannot read plan file"):
        tl.Plan.from_json(tmp_path / "missing.json")


def test_ir_parse_reads_a_path_and_refuses_other_values(vmul, tmp_path):
    f = tmp_path / "v.tl"
    f.write_text(tl.ir.print(vmul))
    assert tl.ir.print(tl.ir.parse(f)) == tl.ir.print(vmul)
    with pytest.raises(tl.ParseError, match="cannot read IR file"):
        tl.ir.parse(tmp_path / "missing.tl")
    with pytest.raises(tl.ParseError, match=r"tl.ir.parse takes IR text \(a str\) or a pathlib.Path, got bytes"):
        tl.ir.parse(b"design")


def test_a_negative_element_index_is_a_parse_error(vmul):
    text = tl.ir.print(vmul).replace("@a_in[0]", "@a_in[-1]")
    with pytest.raises(tl.ParseError, match=r"line \d+, column \d+: element index -1 of fifo 'a_in': elements are "
                                            r"counted from 0"):
        tl.ir.parse(text)
