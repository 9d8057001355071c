"""A strict reader of the Prometheus text exposition format 0.0.4, for the
tests: only the standard library (run with /usr/bin/python3).

    promtext.py check FILE [PREFIX]   every rule below, or what breaks them
    promtext.py get FILE SERIES...    each series' value ('-' if absent);
                                      SERIES is name or name{a="b",c="d"}
                                      with labels in any order
    promtext.py sum FILE NAME [L=V]   the sum over NAME's series (that
                                      have label L equal to V)

The checks: every line is a "# HELP", a "# TYPE", or a sample; a family's
HELP and TYPE come once each, before its samples, and its samples are
together; names and label names have the allowed characters, label values
only the escapes \\\\ \\" \\n; a value is a float; no series twice; counters
end in _total; a histogram's series are _bucket, _sum and _count, its
buckets for each label set ascend in le, are cumulative, end with +Inf,
and +Inf equals _count; every name starts with PREFIX; the text ends with
a newline.
"""
import math
import re
import sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LNAME = r"[a-zA-Z_][a-zA-Z0-9_]*"
VALUE = r'"(?:[^"\\\n]|\\\\|\\"|\\n)*"'
SAMPLE = re.compile(
    r"^(" + NAME + r")(?:\{((?:" + LNAME + r"=" + VALUE + r",?)*)\})?"
    r" (\S+)(?: (-?[0-9]+))?$")
LABEL = re.compile(r"(" + LNAME + r")=(" + VALUE + r"),?")
TYPES = ("counter", "gauge", "histogram", "summary", "untyped")


def unescape(v):
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n"
                  else m.group(1), v[1:-1])


def parse_value(s):
    if s in ("+Inf", "Inf"):
        return math.inf
    if s == "-Inf":
        return -math.inf
    if s == "NaN":
        return math.nan
    if not re.fullmatch(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?", s):
        raise ValueError(s)
    return float(s)


def parse_labels(text):
    labels = {}
    pos = 0
    for m in LABEL.finditer(text or ""):
        if m.start() != pos:
            raise ValueError("labels: " + text)
        pos = m.end()
        if m.group(1) in labels:
            raise ValueError("label given twice: " + m.group(1))
        labels[m.group(1)] = unescape(m.group(2))
    if pos != len(text or ""):
        raise ValueError("labels: " + text)
    return labels


def family_of(name, types):
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix) and \
                types.get(name[:-len(suffix)]) == "histogram":
            return name[:-len(suffix)]
    return name


def read(text, prefix="", errors=None):
    """Samples as {(name, frozenset(labels)): value}; errors appended."""
    errs = errors if errors is not None else []
    helps, types, done, with_samples = {}, {}, set(), set()
    samples = {}
    current = None
    if not text.endswith("\n"):
        errs.append("the text does not end with a newline")
    for n, line in enumerate(text.split("\n")[:-1], 1):
        where = f"line {n}: "
        if line.startswith("#"):
            m = re.fullmatch(r"# (HELP|TYPE) (" + NAME + r") (.*)", line)
            if m is None:
                if line.startswith("# HELP") or line.startswith("# TYPE"):
                    errs.append(where + "malformed: " + line)
                continue
            kind, name, rest = m.groups()
            table = helps if kind == "HELP" else types
            if name in table:
                errs.append(where + f"second {kind} for {name}")
            if name in done or name in with_samples:
                errs.append(where + f"{kind} for {name} after its samples")
            if kind == "TYPE" and rest not in TYPES:
                errs.append(where + "unknown type " + rest)
            if kind == "HELP" and re.search(r"\\[^\\n]", rest):
                errs.append(where + "bad escape in HELP")
            table[name] = rest
            if current is not None and current != name:
                done.add(current)
            current = name
            continue
        m = SAMPLE.match(line)
        if m is None:
            errs.append(where + "not a sample: " + repr(line))
            continue
        name, ltext, vtext, _ = m.groups()
        try:
            labels = parse_labels(ltext)
            value = parse_value(vtext)
        except ValueError as e:
            errs.append(where + str(e))
            continue
        fam = family_of(name, types)
        if not name.startswith(prefix):
            errs.append(where + f"{name} does not start with {prefix}")
        if fam not in types or fam not in helps:
            errs.append(where + f"{name}: no HELP and TYPE before it")
        if fam != current:
            errs.append(where + f"{name}: apart from its family's samples")
        if fam in done:
            errs.append(where + f"{name}: its family ended before")
        with_samples.add(fam)
        if types.get(fam) == "counter" and not name.endswith("_total"):
            errs.append(where + f"counter {name} does not end in _total")
        if types.get(fam) == "histogram" and name == fam:
            errs.append(where + f"histogram {name} without a suffix")
        key = (name, frozenset(labels.items()))
        if key in samples:
            errs.append(where + f"{name} {labels} given twice")
        samples[key] = value
    check_histograms(samples, types, errs)
    return samples


def check_histograms(samples, types, errs):
    for fam, t in types.items():
        if t != "histogram":
            continue
        series = {}
        for (name, labels), v in samples.items():
            if name != fam + "_bucket":
                continue
            d = dict(labels)
            if "le" not in d:
                errs.append(f"{fam}: a bucket without le")
                continue
            le = d.pop("le")
            series.setdefault(frozenset(d.items()), []).append(
                (parse_value(le), v))
        for ls, buckets in series.items():
            what = f"{fam}{dict(ls)}"
            order = [le for le, _ in buckets]
            if order != sorted(order):
                errs.append(f"{what}: buckets out of order")
            buckets.sort()
            counts = [v for _, v in buckets]
            if any(b < a for a, b in zip(counts, counts[1:])):
                errs.append(f"{what}: buckets not cumulative {counts}")
            if not buckets or buckets[-1][0] != math.inf:
                errs.append(f"{what}: no +Inf bucket")
                continue
            count = samples.get((fam + "_count", ls))
            total = samples.get((fam + "_sum", ls))
            if count is None or total is None:
                errs.append(f"{what}: no _count or _sum")
            elif count != buckets[-1][1]:
                errs.append(f"{what}: +Inf {buckets[-1][1]} != _count "
                            f"{count}")


def series(spec):
    m = re.fullmatch(r"(" + NAME + r")(?:\{(.*)\})?", spec)
    if m is None:
        raise SystemExit("bad series: " + spec)
    return (m.group(1), frozenset(parse_labels(m.group(2) or "").items()))


def fmt(v):
    if v is None:
        return "-"
    return str(int(v)) if v == int(v) else repr(v)


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    with open(argv[2], encoding="utf-8") as f:
        text = f.read()
    if argv[1] == "check":
        errs = []
        samples = read(text, argv[3] if len(argv) > 3 else "", errs)
        for e in errs[:30]:
            print(e)
        print(f"{len(samples)} samples, {len(errs)} errors")
        return 1 if errs else 0
    samples = read(text)
    if argv[1] == "get":
        print(" ".join(fmt(samples.get(series(s))) for s in argv[3:]))
        return 0
    if argv[1] == "sum":
        want = argv[4].split("=", 1) if len(argv) > 4 else None
        print(fmt(sum(v for (n, ls), v in samples.items()
                      if n == argv[3] and
                      (want is None or (want[0], want[1]) in ls))))
        return 0
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
