"""Check a cgrun event log (--event-log) against its schema and an expected
sequence of records.

usage: evlog_check.py SCHEMA LOG PATTERN [--partial] [--print]
       evlog_check.py SCHEMA LOG --rejects

Every line must be one JSON object valid under SCHEMA (JSON Schema 2020-12,
docs/event-log.schema.json); seq runs 1, 2, 3, ... with no gap; time and
attempt never go back; run_id and node never change.  The records become
tokens, joined by spaces, that PATTERN (a Python regular expression) must
match whole:

    worker_exit   exit, or exit! when it is the root cause
    stop          stop:REASON
    restart       restart:REASON
    attempt_end   end:OUTCOME
    outcome       outcome:RESULT
    others        their kind (agent_start, round, attempt_start, hang, stacks)

--partial: the log may end early (an agent killed with SIGKILL): no
outcome is required.  --print: print the tokens.  Exit 0 when it all
holds, else 1 with what did not.

--rejects: the schema must hold every record of LOG and refuse each one
changed: any member left out (the common ones first of all), a member
added, an unknown event kind.  A schema that accepts anything would pass
every sequence above; this is what keeps it a check.
"""
import json
import re
import sys

import jsonschema


def token(r):
    """The record's token in the sequence."""
    k = r["event"]
    if k == "worker_exit":
        return "exit!" if r["root_cause"] else "exit"
    if k in ("stop", "restart"):
        return "%s:%s" % (k, r["reason"])
    if k == "attempt_end":
        return "end:" + r["outcome"]
    if k == "outcome":
        return "outcome:" + r["result"]
    return k


def check(schema_path, log_path, pattern, partial):
    """The records of the log, after every check; raises on a failure."""
    schema = json.load(open(schema_path))
    jsonschema.Draft202012Validator.check_schema(schema)
    v = jsonschema.Draft202012Validator(schema)
    recs = []
    with open(log_path) as f:
        for n, line in enumerate(f, 1):
            assert line.endswith("\n"), "line %d is cut: %r" % (n, line)
            r = json.loads(line)
            errs = sorted(v.iter_errors(r), key=lambda e: e.path)
            assert not errs, "line %d: %s: %s" % (n, errs[0].message, line)
            recs.append(r)
    assert recs, "empty event log"
    for i, r in enumerate(recs):
        assert r["seq"] == i + 1, "seq %d at record %d (a gap)" % (r["seq"], i + 1)
        if i == 0:
            continue
        p = recs[i - 1]
        assert r["time"] >= p["time"], "time went back at seq %d" % r["seq"]
        assert r["attempt"] >= p["attempt"], "attempt went back at seq %d" % r["seq"]
        assert (r["run_id"], r["node"]) == (p["run_id"], p["node"]), \
            "run_id or node changed at seq %d" % r["seq"]
    toks = " ".join(token(r) for r in recs)
    assert recs[0]["event"] == "agent_start", "first record: " + recs[0]["event"]
    if not partial:
        assert recs[-1]["event"] == "outcome", "last record: " + recs[-1]["event"]
    assert re.fullmatch(pattern, toks), "sequence\n  %s\ndoes not match\n  %s" % (toks, pattern)
    return recs, toks


def rejects(schema_path, log_path):
    """Check that the schema refuses each record of the log changed."""
    v = jsonschema.Draft202012Validator(json.load(open(schema_path)))
    recs = [json.loads(line) for line in open(log_path)]
    kinds, n = set(), 0
    for r in recs:
        assert v.is_valid(r), "a valid record refused: %s" % r
        changed = [("without " + k, {m: x for m, x in r.items() if m != k})
                   for k in r]
        changed.append(("with a member added", dict(r, added=1)))
        changed.append(("of an unknown kind", dict(r, event="unknown")))
        for what, x in changed:
            assert not v.is_valid(x), "%s record accepted %s" % (r["event"], what)
            n += 1
        kinds.add(r["event"])
    return len(kinds), n


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if "--rejects" in sys.argv and len(args) == 2:
        try:
            kinds, n = rejects(args[0], args[1])
        except (AssertionError, ValueError, OSError) as e:
            print("FAIL: %s: %s" % (args[1], e))
            sys.exit(1)
        print("ok: the schema refuses all %d changed records (%d kinds)" % (n, kinds))
        return
    if len(args) != 3:
        sys.exit(__doc__)
    try:
        _, toks = check(args[0], args[1], args[2], "--partial" in sys.argv)
    except (AssertionError, ValueError, KeyError, OSError) as e:
        print("FAIL: %s: %s" % (args[1], e))
        sys.exit(1)
    if "--print" in sys.argv:
        print(toks)


if __name__ == "__main__":
    main()
