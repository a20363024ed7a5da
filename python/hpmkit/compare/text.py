"""Terminal report: the paper's tables 3-6 as text, from the summary dict."""
from __future__ import annotations


def _f(x, nd=2, suffix=""):
    return "-" if x is None else f"{x:.{nd}f}{suffix}"


def _table(head: list[str], rows: list[list[str]], right: set[int] = frozenset()) -> list[str]:
    w = [max(len(str(c)) for c in col) for col in zip(head, *rows)] if rows else [len(h) for h in head]
    fmt = lambda r: "  ".join((str(c).rjust(w[i]) if i in right else str(c).ljust(w[i]))  # noqa: E731
                              for i, c in enumerate(r)).rstrip()
    return [fmt(head), fmt(["-" * x for x in w])] + [fmt(r) for r in rows]


def _quote_line(e: dict, within: float, fcr: bool = False) -> str:
    """How the quoted ratios and the lower bounds given for thin ones fared against exact."""
    q = e.get("quoted", 0)
    out = (f"quoted ratios ({'FCR-adjusted ' if fcr else ''}95 % interval within "
           f"{100 * within:.0f} %): {q}"
           + (f", median error {100 * e['quoted_median_abs_error']:.0f} %, largest "
              f"{100 * e['quoted_max_abs_error']:.0f} %, {e['quoted_within_15']} within 15 %"
              if q else ""))
    if e.get("bounds"):
        out += (f"; given as 'at least' (thin): {e['bounds']}, the exact ratio at or above the "
                f"bound for {e['bounds_held']}")
    return out


def render(s: dict) -> str:
    a, b = s["a"], s["b"]
    L = []
    L.append(f"A = {a['isa']} (kernel {a['kernel'] or '?'})   vs   B = {b['isa']} (kernel {b['kernel'] or '?'})")
    L.append(f"workloads: {', '.join(s['workloads'])}   metrics: {', '.join(s['metrics'])}   "
             f"ratios: A/B of {'each run’s share' if s['options']['normalise'] == 'total' else 'raw counts'}")
    L.append(f"detectors: {', '.join(s['detectors'])}")
    for w in s["warnings"]:
        L.append(f"warning: {w}")
    c = s["coverage"]
    L.append("")
    L.append("Kernel contexts (table 3)")
    L += _table(["side", "collected", "with stack", "matched", "matched with stack"],
                [[f"A {a['isa']}", c["contexts"][0], c["with_stack"][0], c["matched"][0], c["matched_with_stack"][0]],
                 [f"B {b['isa']}", c["contexts"][1], c["with_stack"][1], c["matched"][1], c["matched_with_stack"][1]]],
                right={1, 2, 3, 4})
    L.append("matched by kind (A/B): " + ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in c["by_kind"].items())
             + "   depth difference (groups): " + ", ".join(f"{k}: {v}" for k, v in c["depth"].items()))
    L.append("")
    L.append("Kernel match coverage by workload, % of samples (table 4; A, B)")
    rows = []
    for wl, v in c["workloads"].items():
        rows.append([wl] + [f"{_f(v[k][0], 1)}, {_f(v[k][1], 1)}" for k in ("kernel_pct", "matched_pct", "coverage_pct")])
    L += _table(["workload", "kernel", "matched", "coverage"], rows, right={1, 2, 3})
    L.append("")
    L.append("Outlier detection: silhouette per contamination, * = chosen (table 5)")
    rows = []
    for m, d in s["detection"].items():
        for det, sil in d["silhouette"].items():
            ch = d["contamination"].get(det)
            cells = [f"{k}={_f(v, 3)}{'*' if ch is not None and k == f'{ch:.2f}' else ''}" for k, v in sil.items()]
            rows.append([m, det, str(d["n"]), "  ".join(cells)])
    L += _table(["metric", "detector", "contexts", "silhouette"], rows, right={2})
    L.append("")
    n = len(s["ranking"])
    L.append(f"Ranking: {s['ranked']} anomalous context(s) of {s['matched_contexts']} matched; "
             f"top {n} (table 6)")
    if n:
        hits = (s.get("truth") or {}).get("row_hits")
        has_exact = bool((s.get("exact") or {}).get("rows")) and \
            (s["exact"]["with_exact"] + s["exact"]["not_separable"]) > 0
        rows = []
        for i, r in enumerate(s["ranking"]):
            # the 95 % interval beside each ratio: with 10-30 samples on a side it spans a factor of
            # two or more, and a reader should see that before quoting the ratio
            # a thin side's ratio is given as what the samples support: at least its lower bound
            q = r.get("quoted", True)
            ci = r.get("ci_fcr") or r["ci95"]
            rat = "  ".join(f"{m[:3]} {_f(r['ratio'][m]) if q else '>=' + _f(ci[m][0], 1)} "
                            f"[{_f(ci[m][0], 1)}-{_f(ci[m][1], 1)}]"
                            for m in s["metrics"])
            row = [r["rank"], f"{r['score']:.4g}", r["function"], r["workload"], f"{r['kind']} {r['depth']}",
                   " > ".join(r["partial_stack"]), ",".join(r["anomalous"]), rat,
                   f"{r['samples'][0]:.0f}/{r['samples'][1]:.0f}"]
            if has_exact:
                ex = r.get("exact") or {}
                row.append(_f(ex["ratio"]) if ex.get("ratio") else "n/a")
            top_leaf = r.get("a_top_leaf") or {}
            row.append("" if top_leaf.get("function", r["function"]) == r["function"]
                       else f"{top_leaf['function']} {100 * top_leaf['share']:.0f} %")
            if hits is not None:
                row.append("yes" if hits[i] else "")
            rows.append(row)
        head = ["#", "score", "function", "workload", "match", "partial stack", "anomalous",
                "ratio A/B [FCR 95 %]" if s["options"].get("fcr") else "ratio A/B [95 %]", "samples"]
        if has_exact:
            head.append("exact ins A/B")
        head.append("A mostly in")
        if hits is not None:
            head.append("known")
        L += _table(head, rows, right={0, 1})
        if has_exact:
            e = s["exact"]
            med = e.get("median_abs_error")
            L.append(f"exact counts of the same runs: {e['with_exact']} of {e['rows']} ranked contexts "
                     f"checked ({e.get('by_path', 0)} by call path; {e['not_separable']} not "
                     f"separable per function, {e['no_table']} without counts)"
                     + (f"; sampled vs exact ratio: median error {100 * med:.0f} %, largest "
                        f"{100 * e['max_abs_error']:.0f} %, {e.get('within_15', 0)} within 15 %; "
                        f"{e['below_1_2']} with an exact ratio below 1.2"
                        if med is not None else ""))
            if e.get("bounds") or (e.get("quoted") and s["options"].get("quote_within")):
                L.append(_quote_line(e, s["options"]["quote_within"], s["options"].get("fcr")))
        from .samework import lines as same_work_lines
        more = same_work_lines(s)
        if more:
            L.append("same work under another name (data/compare/same-work.tsv; the ranking is by name):")
            L += more
    else:
        L.append("no context is anomalous on any metric")
    L.append(f"not ranked: {s['too_thin']} matched context(s) too thin (< {s['options']['min_samples']} "
             f"samples on a side); {s['within_noise']} flag(s) within sampling noise; unmatched (A/B): "
             + ", ".join(f"{wl} {u[0]}/{u[1]}" for wl, u in s["unmatched"].items()))
    from .onesided import lines as one_sided_lines
    from .byfunction import lines as by_function_lines
    more = one_sided_lines(s)
    fn = by_function_lines(s)
    if fn:
        more += ([""] if more else []) + fn
    if more:
        L.append("")
        L += more
    t = s.get("truth")
    if t:
        L.append("")
        L.append(f"Against the truth list ({len(t['entries'])} known issues, {len(t['reached'])} of them "
                 "reached: in A's kernel contexts or hit; a hit needs the labelled function in the context's own frames)")
        L += _table(["k", "ranked", "hits", "precision@k", "recall@k", "recall@k of reached"],
                    [[x["k"], x["ranked"], x["hits"], _f(x["precision"]), _f(x["recall"]),
                      _f(x["recall_reached"])] for x in t["at_k"]],
                    right={0, 1, 2, 3, 4, 5})
        if t["missed"]:
            L.append("not found: " + ", ".join(t["entries"][i]["function"] for i in t["missed"]))
        isa = a['isa'] or 'A'
        for key, where in (("one_sided", f"in the work only {isa} does"),
                           ("by_function", f"among the functions {isa} spends more in")):
            if t.get(key):
                L.append(f"of those, {where}: " + ", ".join(
                    f"{t['entries'][int(i)]['function']} ({h['function']} in {h['workload']})"
                    for i, h in t[key].items()))
    return "\n".join(L) + "\n"
