"""The TCP start-up table of docs/studies.md is what studies.claims.tcp_startup computes."""

from doc_pages import block
from studies.claims.tcp_startup import format_startup, startup_rows


def test_the_tcp_startup_table_is_regenerated_exactly():
    rows = startup_rows(sizes=[1e6, 100e6], workers=[4, 64])
    assert format_startup(rows) == block("studies.md", "tcp-startup-table")
    # Invariants of the study: TCP never beats the fluid model here (it only adds latency and
    # bounds), and a warm call is never slower than the cold one.
    for r in rows:
        assert r["cold"] >= 1.0 - 1e-9
        assert r["warm"] <= r["cold"] + 1e-9
