"""The Python module against the recknn command on the same ratings: recommendations, neighbour
lists and predictions formatted as the command formats them are its files' lines, byte for byte,
for several option sets; every input type (arrays, string ids, a SciPy matrix, a DataFrame);
errors as recknn.Error subclasses with the library's message.

Run by tests/python.sh (make check), which sets RECKNN (the command) and RECKNN_SAMPLE (the
folder of sample_data/ratings.csv) and puts the built package on PYTHONPATH.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import recknn

RECKNN = os.environ.get("RECKNN", "recknn")
SAMPLE = os.path.join(os.environ.get("RECKNN_SAMPLE", "sample_data"), "ratings.csv")


def g(x):
    """The command's number format ("%.9g")."""
    return "%.9g" % x


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """sample_data split into a training file and a test file of every 10th rating."""
    d = tmp_path_factory.mktemp("data")
    data = np.loadtxt(SAMPLE, delimiter=",", skiprows=1)
    test = np.arange(len(data)) % 10 == 3
    for name, part in (("train.csv", data[~test]), ("test.csv", data[test])):
        with open(d / name, "w") as fp:
            fp.write("user,item,rating\n")
            for u, i, r in part[:, :3]:
                fp.write("%d,%d,%s\n" % (u, i, g(r)))
    return d, data[~test], data[test]


def run_command(d, out, options, device="cpu"):
    args = [RECKNN, str(d / "train.csv"), "--test", str(d / "test.csv"), "--device", device, "--quiet",
            "--top-n", "10", "--out", str(out)]
    for k, v in options.items():
        name = "--" + k.replace("_", "-")
        args += [name] if v is True else [name, str(v)]
    subprocess.run(args, check=True)


def rec_lines(m, items, scores):
    """recommend's arrays as recommendations.csv's rows (user,rank,item,score)."""
    return ["%d,%d,%d,%s" % (m.user_ids[x], r + 1, items[x, r], g(scores[x, r]))
            for x in range(items.shape[0]) for r in range(items.shape[1]) if items[x, r] >= 0]


def neighbor_lines(ids, m):
    """The model's neighbour lists as neighbors.csv's first four columns (row, neighbour, rank, sim)."""
    indptr, indices, sims = m._model.neighbors()
    return ["%d,%d,%d,%s" % (ids[x], ids[indices[p]], p - indptr[x] + 1, g(sims[p]))
            for x in range(len(indptr) - 1) for p in range(indptr[x], indptr[x + 1])]


def lines(path):
    with open(path) as fp:
        return fp.read().splitlines()[1:]


CASES = [
    {},
    {"metric": "cosine", "k": 30, "rank": "lists", "min_support": 2},
    {"implicit": True, "rank": "weighted-cosine"},
    {"metric": "pearson-baseline", "predict": "baseline", "k": 40},
    {"metric": "pearson-baseline", "predict": "interpolate", "k": 20, "rank": "lists"},
    {"metric": "pearson-baseline", "predict": "global", "k": 20, "global_epochs": 5, "rank": "lists"},
]


@pytest.fixture(scope="module")
def gpu():
    """Why no GPU test can run here (None: a GPU is usable)."""
    try:
        recknn.ItemKNN(device="gpu").fit([1, 1, 2], [1, 2, 2], [3.0, 4.0, 5.0])
    except recknn.GPUError as e:
        return str(e)
    return None


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("options", CASES)
def test_same_files_as_the_command(files, tmp_path, options, device, gpu):
    if device == "gpu" and gpu is not None:
        pytest.skip("no GPU: " + gpu)
    d, train, test = files
    run_command(d, tmp_path, options, device)
    m = recknn.ItemKNN(device=device, **options).fit(train[:, 0].astype(np.int64), train[:, 1].astype(np.int64),
                                                     train[:, 2])
    items, scores = m.recommend(n=10)
    got = rec_lines(m, items, scores)
    assert len(got) > 1000 and got == lines(tmp_path / "recommendations.csv")
    got = neighbor_lines(m.item_ids, m)
    want = [",".join(line.split(",")[:4]) for line in lines(tmp_path / "neighbors.csv")]
    assert len(got) > 1000 and got == want
    # predictions of the test pairs whose user and item the training ratings know
    known = np.isin(test[:, 0], m.user_ids) & np.isin(test[:, 1], m.item_ids)
    pred = m.predict(test[known, 0].astype(np.int64), test[known, 1].astype(np.int64))
    want = {(ln.split(",")[0], ln.split(",")[1]): ln.split(",")[3] for ln in lines(tmp_path / "predictions.csv")}
    got = {("%d" % u, "%d" % i): g(p) for u, i, p in zip(test[known, 0], test[known, 1], pred)}
    assert len(got) > 500 and got == {k: want[k] for k in got}


def test_some_users_and_similar_items(files):
    _, train, _ = files
    m = recknn.ItemKNN(device="cpu", k=5).fit(train[:, 0].astype(np.int64), train[:, 1].astype(np.int64),
                                             train[:, 2])
    every, _ = m.recommend(n=4)
    users = [int(m.user_ids[7]), int(m.user_ids[2])]
    some, _ = m.recommend(users, n=4)
    assert (some == every[[7, 2]]).all()
    nb, sims = m.similar_items([int(m.item_ids[0])], n=8)
    assert nb.shape == (1, 8) and (nb[0, 5:] == -1).all() and (sims[0, 5:] == 0).all()


def test_string_ids_and_no_ratings():
    users = ["ann", "bob", "bob", "cy", "cy", "ann", "dee", "dee"]
    items = ["x", "x", "y", "y", "z", "z", "x", "z"]
    m = recknn.ItemKNN(device="cpu", metric="cosine", rank="lists").fit(users, items)
    recs, scores = m.recommend(["bob"], n=3)
    assert recs.dtype == object and recs[0, 0] == "z" and recs[0, 1] is None
    assert m.similar_items(["x"], 2)[0][0, 0] in ("y", "z")


def test_sparse_and_frame_inputs():
    sp = pytest.importorskip("scipy.sparse")
    dense = np.array([[5, 0, 3, 1], [4, 2, 0, 1], [0, 5, 4, 0], [1, 0, 5, 4]], dtype=np.float32)
    a = recknn.ItemKNN(device="cpu", rank="lists").fit(sp.csr_matrix(dense))
    u, i = np.nonzero(dense)
    b = recknn.ItemKNN(device="cpu", rank="lists").fit(u, i, dense[u, i])
    assert (a.recommend(n=2)[0] == b.recommend(n=2)[0]).all()
    assert a.neighbors().shape == (4, 4)
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"user": u, "item": i, "rating": dense[u, i]})
    c = recknn.ItemKNN(device="cpu", rank="lists").fit(frame)
    assert (c.recommend(n=2)[0] == b.recommend(n=2)[0]).all()
    assert list(c.recommend(n=2, as_frame=True).columns) == ["user", "rank", "item", "score"]


def test_arrays_in_csr_order_read_in_place(files):
    """Three arrays in CSR order (users never decreasing, int32 items 0..n-1 ascending in a user,
    float32 ratings) are read in place: the model holds the very arrays; its results are those of
    the same ratings in another order, which are copied."""
    _, train, _ = files
    users = train[:, 0].astype(np.int64)
    item_ids, items = np.unique(train[:, 1], return_inverse=True)
    items = items.astype(np.int32)
    o = np.lexsort((items, users))
    u, i, r = users[o], items[o], train[o, 2].astype(np.float32)
    held = sys.getrefcount(i), sys.getrefcount(r)
    a = recknn.ItemKNN(device="cpu", k=10).fit(u, i, r)
    assert (sys.getrefcount(i), sys.getrefcount(r)) == (held[0] + 1, held[1] + 1)
    x = np.random.default_rng(3).permutation(len(u))
    b = recknn.ItemKNN(device="cpu", k=10).fit(u[x], i[x], r[x])
    assert (a.user_ids == b.user_ids).all() and (a.item_ids == b.item_ids).all()
    for got, want in zip(a.recommend(n=10), b.recommend(n=10)):
        assert (got == want).all()
    for got, want in zip(a._model.neighbors(), b._model.neighbors()):
        assert (got == want).all()
    # not every index present: numbered like any ids, the same lists
    c = recknn.ItemKNN(device="cpu", k=10).fit(u, i * 2, r)
    assert (c.item_ids == np.arange(len(item_ids)) * 2).all()
    assert (c.recommend(n=10)[0] == a.recommend(n=10)[0] * 2).all()


def test_errors():
    with pytest.raises(recknn.ArgumentError, match="unknown option 'nope'"):
        recknn.ItemKNN(nope=1)
    with pytest.raises(recknn.ArgumentError, match="--holdout is not an option of a model fitted in memory"):
        recknn.ItemKNN(holdout=0.2)
    with pytest.raises(recknn.ArgumentError, match=r"--metric: unknown metric 'x'"):
        recknn.ItemKNN(metric="x").fit([1, 2], [1, 2], [3.0, 4.0])
    with pytest.raises(recknn.ArgumentError, match=r"-k: '0' out of range"):
        recknn.ItemKNN(k=0).fit([1, 2], [1, 2], [3.0, 4.0])
    with pytest.raises(recknn.ArgumentError, match="not fitted"):
        recknn.ItemKNN().recommend()
    m = recknn.ItemKNN(device="cpu").fit([1, 2, 2], [1, 1, 2], [3.0, 4.0, 5.0])
    with pytest.raises(recknn.ArgumentError, match="unknown user 9"):
        m.recommend([9])
    with pytest.raises(recknn.ArgumentError, match="not a finite number"):
        recknn.ItemKNN().fit([1, 2], [1, 2], [3.0, float("nan")])
    with pytest.raises(recknn.DataError, match="more than once"):
        recknn.ItemKNN(device="cpu", duplicates="error").fit([1, 1, 2], [1, 1, 2], [3.0, 4.0, 5.0])
    assert issubclass(recknn.ArgumentError, recknn.Error) and issubclass(recknn.ArgumentError, ValueError)


def test_gpu_or_its_error():
    """device="gpu": the CPU's results on a GPU, or GPUError naming why there is none."""
    u, i, r = [1, 1, 2, 2, 3, 3], [1, 2, 2, 3, 1, 3], [5.0, 3.0, 4.0, 2.0, 1.0, 5.0]
    cpu = recknn.ItemKNN(device="cpu").fit(u, i, r)
    try:
        gpu = recknn.ItemKNN(device="gpu").fit(u, i, r)
    except recknn.GPUError as e:
        assert "gpu" in str(e).lower()
        return
    assert (gpu.recommend(n=2)[0] == cpu.recommend(n=2)[0]).all()


@pytest.mark.parametrize("options", [CASES[0], CASES[2]])
def test_evaluate_as_metrics_json(files, tmp_path, options):
    """recknn.evaluate's numbers are metrics.json's, for the model and the most-popular baseline."""
    import json
    d, train, test = files
    run_command(d, tmp_path, dict(options, baseline="popular"))
    with open(tmp_path / "metrics.json") as fp:
        mj = json.load(fp)
    m = recknn.ItemKNN(device="cpu", **options).fit(train[:, 0].astype(np.int64), train[:, 1].astype(np.int64),
                                                     train[:, 2])
    got = recknn.evaluate(m, (test[:, 0].astype(np.int64), test[:, 1].astype(np.int64), test[:, 2]), n=10)
    for key, want in mj["metrics"].items():
        assert g(got[key]) == g(want), key
    base = recknn.evaluate(m, (test[:, 0].astype(np.int64), test[:, 1].astype(np.int64), test[:, 2]), n=10,
                           baseline=True)
    for key, want in mj["summary_baseline_popular"].items():
        assert g(base[key]) == g(want["mean"]), key
    # fitted by evaluate itself, the measures asked for alone
    tr = (train[:, 0].astype(np.int64), train[:, 1].astype(np.int64), train[:, 2])
    te = (test[:, 0].astype(np.int64), test[:, 1].astype(np.int64), test[:, 2])
    some = recknn.evaluate(recknn.ItemKNN(device="cpu", **options), tr, te, n=10, metrics=["precision", "ndcg"])
    assert some == {"precision": got["precision"], "ndcg": got["ndcg"]}
    assert set(recknn.evaluate(m, te, n=10)) == set(recknn._MEASURES)
    with pytest.raises(recknn.ArgumentError, match="unknown measure 'auc'"):
        recknn.evaluate(m, te, metrics=["precision", "auc"])
    with pytest.raises(recknn.ArgumentError, match="not 3 data sets"):
        recknn.evaluate(m, te, te, te)


def test_user_knn_as_the_command(files, tmp_path):
    d, train, test = files
    run_command(d, tmp_path, {"by": "user", "metric": "cosine", "k": 25})
    m = recknn.UserKNN(device="cpu", metric="cosine", k=25).fit(train[:, 0].astype(np.int64),
                                                                  train[:, 1].astype(np.int64), train[:, 2])
    items, scores = m.recommend(n=10)
    got = rec_lines(m, items, scores)
    assert len(got) > 1000 and got == lines(tmp_path / "recommendations.csv")
    got = neighbor_lines(m.user_ids, m)
    assert len(got) > 1000 and got == [",".join(ln.split(",")[:4]) for ln in lines(tmp_path / "neighbors.csv")]
    near, _ = m.similar_users([int(m.user_ids[0])], n=3)
    indptr, indices, _ = m._model.neighbors()
    assert list(near[0]) == [int(m.user_ids[indices[p]]) for p in range(indptr[0], indptr[0] + 3)]
    with pytest.raises(recknn.ArgumentError, match="similar_users"):
        m.similar_items([1])


def test_save_and_load(files, tmp_path):
    """A model saved from Python: the command's --model run recommends what it does, and
    recknn.load gives it back (ids, recommendations, predictions)."""
    d, train, _ = files
    m = recknn.ItemKNN(device="cpu", k=15).fit(train[:, 0].astype(np.int64), train[:, 1].astype(np.int64),
                                               train[:, 2])
    m.save(tmp_path / "m.rkm")
    subprocess.run([RECKNN, str(d / "train.csv"), "--model", str(tmp_path / "m.rkm"), "--device", "cpu",
                    "--quiet", "--top-n", "10", "--out", str(tmp_path / "o")], check=True)
    items, scores = m.recommend(n=10)
    got = rec_lines(m, items, scores)
    assert len(got) > 1000 and got == lines(tmp_path / "o" / "recommendations.csv")
    back = recknn.load(tmp_path / "m.rkm", device="cpu")
    assert (back.user_ids == m.user_ids).all() and (back.item_ids == m.item_ids).all()
    b_items, b_scores = back.recommend(n=10)
    assert (b_items == items).all() and (b_scores == scores).all()
    pairs = ([int(m.user_ids[3]), int(m.user_ids[9])], [int(m.item_ids[5]), int(m.item_ids[40])])
    assert (back.predict(*pairs) == m.predict(*pairs)).all()
    with pytest.raises(recknn.FileError):
        recknn.load(tmp_path / "none.rkm")
    with pytest.raises(recknn.ModelFileError):
        recknn.load(d / "train.csv")


@pytest.mark.parametrize("mode", ["interpolate", "global"])
def test_save_and_load_prediction_models(files, tmp_path, mode):
    """The models of CONTRACT.md §4b saved from Python: loaded back they predict the same
    numbers, and the command's --model answers the test pairs as the model does."""
    d, train, test = files
    m = recknn.ItemKNN(device="cpu", metric="pearson-baseline", predict=mode, k=15, global_epochs=4)
    m.fit(train[:, 0].astype(np.int64), train[:, 1].astype(np.int64), train[:, 2])
    m.save(tmp_path / "p.rkm")
    back = recknn.load(tmp_path / "p.rkm", device="cpu")
    known = np.isin(test[:, 0], m.user_ids) & np.isin(test[:, 1], m.item_ids)
    us, its = test[known, 0].astype(np.int64), test[known, 1].astype(np.int64)
    mine = m.predict(us, its)
    assert len(mine) > 100 and (back.predict(us, its) == mine).all()
    with open(tmp_path / "q.csv", "w") as fp:
        fp.writelines("%d,%d\n" % (u, i) for u, i in zip(us, its))
    subprocess.run([RECKNN, str(d / "train.csv"), "--model", str(tmp_path / "p.rkm"), "--queries",
                    str(tmp_path / "q.csv"), "--device", "cpu", "--quiet", "--top-n", "0", "--out",
                    str(tmp_path / "o")], check=True)
    got = [float(ln.split(",")[3]) for ln in lines(tmp_path / "o" / "predictions.csv")]
    assert ["%.8f" % x for x in got] == ["%.8f" % x for x in mine]


def test_tune_predict(files, tmp_path):
    """tune_predict=True chooses the model's options on the ratings given as the command's
    --tune-predict does on its training file: the same predictions of the test pairs."""
    d, train, test = files
    m = recknn.ItemKNN(device="cpu", metric="pearson-baseline", predict="interpolate", tune_predict=True)
    m.fit(train[:, 0].astype(np.int64), train[:, 1].astype(np.int64), train[:, 2])
    subprocess.run([RECKNN, str(d / "train.csv"), "--test", str(d / "test.csv"), "--metric", "pearson-baseline",
                    "--predict", "interpolate", "--tune-predict", "--device", "cpu", "--quiet", "--top-n", "0",
                    "--out", str(tmp_path / "o")], check=True)
    rows = [ln.split(",") for ln in lines(tmp_path / "o" / "predictions.csv")]
    known = [r for r in rows if int(r[4]) > 0]
    got = m.predict(np.array([int(r[0]) for r in known]), np.array([int(r[1]) for r in known]))
    assert len(known) > 100 and [float("%.8f" % x) for x in got] == [float(r[3]) for r in known]


def random_ratings(n_users, n_items, per, seed):
    rng = np.random.default_rng(seed)
    users = np.repeat(np.arange(n_users, dtype=np.int32), per)
    items = rng.integers(0, n_items, size=users.size).astype(np.int32)
    ratings = rng.integers(1, 6, size=users.size).astype(np.float32)
    return users, items, ratings


@pytest.fixture
def no_progress():
    yield
    recknn.set_progress(None)


def test_progress_reports_and_stops(no_progress):
    u, i, r = random_ratings(3000, 3000, 12, 5)
    seen = []
    recknn.set_progress(lambda stage, done, total, unit: seen.append((stage, done, total, unit)))
    model = recknn.ItemKNN(device="cpu", threads=1).fit(u, i, r)
    assert any(s == "similarity" and 0 < d < t for s, d, t, _ in seen)
    assert all(d <= t for _, d, t, _ in seen if t > 0)
    seen.clear()
    items, _ = model.recommend(n=5)
    assert any(s == "top-N" for s, _, _, _ in seen)
    reference = recknn.ItemKNN(device="cpu", threads=1).fit(u, i, r).recommend(n=5)[0]
    assert np.array_equal(items, reference)

    class Enough(Exception):
        pass

    def stop_at_third(stage, done, total, unit):
        stop_at_third.calls += 1
        if stop_at_third.calls == 3:
            raise Enough(stage)

    stop_at_third.calls = 0
    recknn.set_progress(stop_at_third)
    with pytest.raises(Enough, match="similarity"):
        recknn.ItemKNN(device="cpu", threads=1).fit(u, i, r)
    stop_at_third.calls = 0
    with pytest.raises(Enough, match="top-N"):
        model.recommend(n=5)
    recknn.set_progress(None)
    items2, _ = model.recommend(n=5)  # the model as it was
    assert np.array_equal(items2, reference)
    with pytest.raises(TypeError):
        recknn.set_progress(42)


def test_ctrl_c_stops_a_long_call(no_progress):
    """Ctrl-C while the library computes (the main thread inside fit, in no Python code: the
    progress callable is print into a StringIO, both in C) raises KeyboardInterrupt from fit at its
    next report, long before its end; the next call runs in full."""
    import functools
    import io
    import threading
    import _thread

    u, i, r = random_ratings(20000, 2000, 40, 6)
    full = io.StringIO()
    recknn.set_progress(functools.partial(print, file=full))
    recknn.ItemKNN(device="cpu", threads=1).fit(u, i, r)
    n_full = full.getvalue().count("\n")
    assert n_full > 100

    out = io.StringIO()

    def ctrl_c():  # once fit has reported, as a SIGINT would
        while out.getvalue().count("\n") < 3:
            threading.Event().wait(0.001)
        _thread.interrupt_main()

    recknn.set_progress(functools.partial(print, file=out))
    t = threading.Thread(target=ctrl_c)
    t.start()
    with pytest.raises(KeyboardInterrupt):
        recknn.ItemKNN(device="cpu", threads=1).fit(u, i, r)
    t.join()
    assert out.getvalue().count("\n") < n_full  # stopped mid-call, not after it
    # without a callable: the module's own check at each report (what this cannot tell apart from an
    # interrupt raised as fit returns, without timing it, is asserted above)
    recknn.set_progress(None)
    started = threading.Event()

    def ctrl_c_later():
        started.wait()
        threading.Event().wait(0.01)
        _thread.interrupt_main()

    t = threading.Thread(target=ctrl_c_later)
    t.start()
    with pytest.raises(KeyboardInterrupt):
        started.set()
        recknn.ItemKNN(device="cpu", threads=1).fit(u, i, r)
        t.join()  # fit ended first: the interrupt comes here
    t.join()
    model = recknn.ItemKNN(device="cpu", threads=1).fit(u, i, r)
    assert model.recommend(n=3)[0].shape == (20000, 3)


def test_ball_cover_lists(files, tmp_path):
    """approx="rbc": the command's --approx neighbour lists and recommendations; no predictions."""
    d, train, test = files
    options = {"metric": "cosine-full", "k": 10, "approx": "rbc", "reps": 9, "probes": 3, "approx_check": 60}
    out = tmp_path / "approx"
    subprocess.run([RECKNN, str(d / "train.csv"), "--device", "cpu", "--quiet", "--top-n", "10", "--out", str(out)]
                   + [x for k, v in options.items() for x in ("--" + k.replace("_", "-"), str(v))], check=True)
    m = recknn.ItemKNN(device="cpu", **options).fit(train[:, 0].astype(np.int64), train[:, 1].astype(np.int64),
                                                     train[:, 2])
    items, scores = m.recommend(n=10)
    assert rec_lines(m, items, scores) == lines(out / "recommendations.csv")
    # the recall check: metrics.json's "approx" members
    with open(out / "metrics.json") as fp:
        want = json.load(fp)["approx"]
    got = m.approx_check
    assert got["sampled"] == 60 and got["recall_at_k"] < 1.0
    for key in ("sampled", "evaluated", "hits", "exact_entries", "recall_at_k", "recall_at_k_ties"):
        assert got[key] == pytest.approx(want[key], rel=1e-9), key
    assert recknn.ItemKNN(device="cpu", k=2).fit([1, 1, 2], [1, 2, 2], [3.0, 4.0, 5.0]).approx_check is None
    with pytest.raises(recknn.ArgumentError, match="no predictions"):
        m.predict([train[0, 0]], [train[0, 1]])
