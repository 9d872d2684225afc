#!/bin/sh
# cli_csv.sh — every CSV recknn writes is RFC 4180: ids holding commas, double
# quotes, CRs, LFs, tabs, spaces and non-ASCII bytes, read from a quoted input,
# come back byte for byte through Python's csv module (every row with the
# header's field count, every id one of the input's) and through recknn's own
# loader; --users and --queries files take the same quoting.  Skipped (77)
# without python3.
. "$top_srcdir/tests/setup.sh"
[ -x "$RECKNN" ] || fail "$RECKNN is not built"
PY=$(command -v python3 || true)
[ -n "$PY" ] || { echo "SKIP: no python3"; exit 77; }

# 60 users x 40 items, ids with every special byte, every field quoted
"$PY" - "$tmp" <<'PY'
import csv, random, sys
random.seed(20261127)
specials = [',', '"', '\r', '\n', '\r\n', ' ', '\t', ';', ':', '\u00e9', 'x']
def rid(p, i):
    s = ''.join(random.choice(specials) for _ in range(random.randint(0, 4)))
    return '%s%d%s' % (p, i, s) if random.random() < 0.5 else '%s%s%d' % (s, p, i)
users = [rid('u', i) for i in range(60)]
items = [rid('i', i) for i in range(40)]
with open(sys.argv[1] + '/in.csv', 'w', newline='') as f:
    w = csv.writer(f, quoting=csv.QUOTE_ALL)
    w.writerow(['user', 'item', 'rating'])
    for u in users:
        for it in random.sample(items, 15):
            w.writerow([u, it, random.randint(1, 5)])
with open(sys.argv[1] + '/users.csv', 'w', newline='') as f:
    w = csv.writer(f)
    for u in users[:7]:
        w.writerow([u])
with open(sys.argv[1] + '/queries.csv', 'w', newline='') as f:
    w = csv.writer(f)
    for k in range(9):
        w.writerow([users[k * 3], items[k * 4]])
PY

# check.py INPUT DIR FILE... : every row of each FILE of DIR has the header's
# field count and names only ids of INPUT
cat > "$tmp/check.py" <<'PY'
import csv, sys
users, items = set(), set()
for r in csv.DictReader(open(sys.argv[1], newline='', encoding='utf-8')):
    users.add(r['user']); items.add(r['item'])
bad = 0
for name in sys.argv[3:]:
    rows = list(csv.reader(open(sys.argv[2] + '/' + name, newline='', encoding='utf-8')))
    head = rows[0]
    if len(rows) < 2:
        print('%s: no rows' % name); bad += 1
    for r in rows[1:]:
        if len(r) != len(head):
            print('%s: %d fields, header %d: %r' % (name, len(r), len(head), r)); bad += 1; continue
        d = dict(zip(head, r))
        for col, known in (('user', users), ('item', items), ('neighbor', items)):
            if col in d and d[col] not in known:
                print('%s: unknown %s %r' % (name, col, d[col])); bad += 1
sys.exit(1 if bad else 0)
PY

expect_status 0 "$RECKNN" "$tmp/in.csv" --holdout 0.2 --seed 1 --rank lists --metric cosine-full --device cpu \
    --user-metrics --out "$tmp/o"
"$PY" "$tmp/check.py" "$tmp/in.csv" "$tmp/o" neighbors.csv recommendations.csv predictions.csv user_metrics.csv ||
    fail "the outputs do not read back through Python's csv module"

# recknn's own loader reads its outputs back: the same users and items
expect_status 0 "$RECKNN" "$tmp/o/predictions.csv" --columns user,item,rating --rank lists --metric cosine-full \
    --device cpu --out "$tmp/back"
"$PY" - "$tmp/o/predictions.csv" "$tmp/back/recommendations.csv" <<'PY' || fail "recknn's loader changed the ids"
import csv, sys
src = list(csv.DictReader(open(sys.argv[1], newline='', encoding='utf-8')))
got = list(csv.DictReader(open(sys.argv[2], newline='', encoding='utf-8')))
users = {r['user'] for r in src}
sys.exit(0 if {r['user'] for r in got} == users else 1)
PY

# --users and --queries: the same quoting on the way in
expect_status 0 "$RECKNN" "$tmp/in.csv" --users "$tmp/users.csv" --rank lists --metric cosine-full --device cpu \
    --save-model "$tmp/m.rkm" --out "$tmp/u"
[ "$("$PY" -c 'import csv,sys; print(len({r["user"] for r in csv.DictReader(open(sys.argv[1], newline=""))}))' \
    "$tmp/u/recommendations.csv")" = 7 ] || fail "--users: not the 7 quoted users"
grep -q "users_unknown\": 0" "$tmp/u/metrics.json" || fail "--users: a quoted id was not found"
expect_status 0 "$RECKNN" "$tmp/in.csv" --model "$tmp/m.rkm" --queries "$tmp/queries.csv" --top-n 0 --device cpu \
    --out "$tmp/q"
grep -q 'does not know' "$tmp/stderr" && fail "--queries: a quoted id was not found: $(cat "$tmp/stderr")"
"$PY" "$tmp/check.py" "$tmp/in.csv" "$tmp/q" predictions.csv || fail "--queries: the answers' ids changed"
exit 0
