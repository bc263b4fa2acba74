"""The cluster part's report (``bench/cluster_cases.py``): its sizes, its targets, and the
Markdown section made from its results."""

from __future__ import annotations

from typing import Any

from bench import history_fill

RUNS = 300  # anonymous runs measured per setup
STATEMENT_TARGET = 2.0  # statements per run, at most (issue 19)
HISTORY_RUNS = 300_000
SEARCHES = 21
SEARCH_TARGET_MS = 5.0
CLAIM_BATCH = 10
CLAIM_ROUNDS = 51
CLAIM_TARGET_MS = 2.0


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def markdown(r: dict[str, Any]) -> str:
    lines = ["## Cluster on PostgreSQL (issue 19)", "",
             f"Statements per anonymous `public_ping` run ({RUNS} runs, one after another, "
             "less an idle window as long): every statement the node sent, counted by a proxy "
             "in front of the server.", "",
             "| setup | all | the hub's own | the rest (BEGIN/COMMIT, SET, checks) "
             f"| target ≤ {STATEMENT_TARGET:.0f} |", "|---|---:|---:|---:|---|"]
    for s in r["statements"]:
        lines.append(f"| {s['setup']} | ERROR: {s['error']} | | | FAIL |" if "error" in s else
                     f"| {s['setup']} | {s['total']} | {s['hub']} | {s['rest']} | "
                     f"{_verdict(s['total'] <= STATEMENT_TARGET)} |")
    lines += ["", "Statements per run, by text:", ""]
    for s in r["statements"]:
        sql = "; ".join(f"{x['per_run']} × `{x['sql'][:70]}`" for x in s.get("statements", []))
        lines.append(f"- {s['setup']}: {sql or 'none'}")
    lines += ["", "| measure | value | target | |", "|---|---|---|---|",
              *_search_lines(r["search"]), *_claim_lines(r["claims"])]
    if "fill_s" in r["search"]:
        lines += ["", f"History filled in {r['search']['fill_s']} s (COPY, then ANALYZE)."]
    return "\n".join(lines) + "\n"


def _search_lines(search: dict[str, Any]) -> list[str]:
    head = f"| history search '{history_fill.RARE}' at {HISTORY_RUNS:,} runs"
    if "error" in search:
        return [f"{head} | ERROR: {search['error']} | < {SEARCH_TARGET_MS:.0f} ms | FAIL |"]
    rare = search["terms"][history_fill.RARE]
    lines = [f"{head} (median of {SEARCHES}; {rare['found']} found) | {rare['median_ms']} ms "
             f"| < {SEARCH_TARGET_MS:.0f} ms | {_verdict(rare['median_ms'] < SEARCH_TARGET_MS)} |"]
    lines.append(f"| the same, the server's execution time (EXPLAIN ANALYZE, median of 5) | "
                 f"{search['server_ms']} ms | — | |")
    for term, t in search["terms"].items():
        if term != history_fill.RARE:
            lines.append(f"| history search '{term}' ({t['found']} found) | {t['median_ms']} ms "
                         "| — | |")
    return lines


def _claim_lines(claims: dict[str, Any]) -> list[str]:
    head = f"| claim round of {CLAIM_BATCH} due occurrences"
    if "error" in claims:
        return [f"{head} | ERROR: {claims['error']} | < {CLAIM_TARGET_MS:.0f} ms | FAIL |"]
    return [f"{head}, {what} (median of {CLAIM_ROUNDS}) | {claims[key]} ms | "
            f"< {CLAIM_TARGET_MS:.0f} ms | {_verdict(claims[key] < CLAIM_TARGET_MS)} |"
            for key, what in (("won_ms", "won"), ("lost_ms", LOST))] + [
        f"| a bare one-row INSERT's commit, for scale (median of {CLAIM_ROUNDS}) | "
        f"{claims.get('commit_ms')} ms | — | |"]


LOST = "lost (a second node, the same batch)"
