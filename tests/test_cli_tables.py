"""Readable command-line tables: the busiest rows first, a bounded row count with --all for the rest,
natural name order, headers over their columns, nothing cut at 80 columns, progress on stderr only.

Checked on the library GEMM (4 x 4 cores on npu1, small sizes to stay fast) and on a 400-core xcvc1902
design (20 chains of 20 stages, greedy plan).
"""

from __future__ import annotations

import io
import re
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

import tilelang as tl
from tilelang.cli import main
from tilelang.cli.commands import phase
from tilelang.report.tables import TOP_ROWS, natural_key, stats_report, text_table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))

import designs  # noqa: E402


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def gemm_plan(tmp_path_factory) -> tuple[tl.Plan, Path]:
    gemm = tl.library.matmul(128, 128, 128, in_dtype=tl.bf16, out_dtype=tl.f32, device="npu1",
                             tiling={"m": 32, "k": 32, "n": 32})
    plan = tl.plan(gemm)
    path = tmp_path_factory.mktemp("gemm") / "plan.json"
    path.write_text(plan.to_json())
    return plan, path


def tables(report: str) -> dict[str, list[str]]:
    """The report's tables by their first header word: header line, then rows (the hidden-rows note included)."""
    out: dict[str, list[str]] = {}
    for block in report.split("\n\n"):
        lines = block.splitlines()
        for i, line in enumerate(lines):
            for title in ("core", "DMA channel", "memtile link", "stream link"):
                if line.startswith(title + "  ") or line.startswith(title + " "):
                    out.setdefault(title, lines[i:])
    return out


def _rows(lines: list[str]) -> list[str]:
    """A table's data rows: not its header, not the hidden-rows note."""
    return [r for r in lines[1:] if r and not re.match(r"\(\d+ more ", r)]


def _util(row: str) -> float:
    return float(re.findall(r"(\d+\.\d)%", row)[0])


def test_natural_order_reads_numbers():
    names = ["w_core10", "w_core2", "w_core1", "core_1_10", "core_1_2", "a"]
    assert sorted(names, key=natural_key) == ["a", "core_1_2", "core_1_10", "w_core1", "w_core2", "w_core10"]


def test_headers_sit_over_their_columns():
    lines = text_table(["name", "bytes", "util"], [["x", "12345", "5.0%"], ["longer name", "7", "100.0%"]], (1, 2))
    header, *rows = lines
    for word in ("bytes", "util"):
        end = header.index(word) + len(word)
        assert all(row[end - 1] != " " and (len(row) == end or row[end] == " ") for row in rows), (word, lines)
    assert all(row.startswith(("x ", "longer name")) for row in rows)


def test_simulate_shows_the_busiest_rows_and_how_many_it_hid(capsys, gemm_plan):
    plan, path = gemm_plan
    stats = tl.simulate(plan, mode="timing").stats
    code, out, err = run(capsys, "simulate", path)
    assert code == 0 and err == ""
    found = tables(out)
    for title, every in (("DMA channel", stats.channels), ("stream link", stats.stream_links)):
        rows = _rows(found[title])
        utils = [_util(r) for r in rows]
        assert utils == sorted(utils, reverse=True), title
        hidden = len(every) - TOP_ROWS
        assert hidden > 0 and len(rows) == TOP_ROWS, (title, len(every))
        assert f"({hidden} more {title}s not shown, the least utilised; --all shows every row)" in found[title]
    code, out, _ = run(capsys, "simulate", path, "--all")
    found = tables(out)
    assert len(found["DMA channel"]) == 1 + len(stats.channels) and "more DMA" not in out


def test_simulate_headers_line_up_on_the_gemm(capsys, gemm_plan):
    _, path = gemm_plan
    _, out, _ = run(capsys, "simulate", path)
    for title, lines in tables(out).items():
        header, rows = lines[0], _rows(lines)
        for word in ("bytes", "busy", "util"):
            if word in header:
                end = header.index(word) + len(word)
                assert all(len(r) >= end and r[end - 1] != " " for r in rows), (title, word)


def test_plan_report_lists_buffers_in_natural_order(capsys):
    d = designs.broadcast_scale(cores=12, n=64)
    text = tl.plan(d, strategy="greedy").report()
    block = text.split("buffers\n", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    names = [ln.split()[0] for ln in block]
    assert names == sorted(names, key=natural_key) and names != sorted(names)


def test_devices_are_not_cut_at_80_columns(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run(capsys, "devices")
    assert code == 0
    lines = out.splitlines()
    assert max(len(ln) for ln in lines) <= 80
    firsts = {ln.split()[0] for ln in lines[1:]}
    assert firsts == set(tl.devices())


def test_the_phase_spinner_names_the_phase_and_its_time_on_a_terminal_only():
    buf = io.StringIO()
    with phase("planning gemm on npu1", Console(file=buf, force_terminal=True, width=80)):
        time.sleep(1.1)
    shown = buf.getvalue()
    assert "planning gemm on npu1" in shown and "0:00:01" in shown
    quiet = io.StringIO()
    with phase("simulating gemm", Console(file=quiet, force_terminal=False)):
        pass
    assert quiet.getvalue() == ""


@pytest.mark.slow
def test_a_400_core_report_stays_readable(capsys, tmp_path):
    path = tmp_path / "chains.json"
    plan = tl.plan(designs.chains(n_chains=20, stages=20, n=64, iters=4), strategy="greedy")
    assert len(plan.placement) == 400
    path.write_text(plan.to_json())
    code, out, err = run(capsys, "simulate", path)
    assert code == 0 and err == ""
    stats_part = out.split("\nwhere the ")[0]
    assert max(len(ln) for ln in stats_part.splitlines()) <= 100
    found = tables(out)
    assert len(_rows(found["core"])) == TOP_ROWS
    assert "(380 more cores not shown" in stats_part
    assert len(out.splitlines()) < 120


def test_stats_report_without_a_limit_lists_every_row():
    plan = tl.plan(designs.vector_scalar_mul())
    res = tl.simulate(plan, mode="timing")
    text = stats_report(res.stats, None)
    assert len(tables(text)["DMA channel"]) == 1 + len(res.stats.channels)
