"""recknn from Python on MovieLens' ml-latest-small (https://grouplens.org/datasets/movielens/;
not in this repository): fit on 80% of the ratings, measure against the most-popular baseline on
the other 20%, and show one user's recommendations and one film's neighbours with their titles.

    python3 examples/ml_latest_small.py path/to/ml-latest-small

Needs the recknn module (make install, or PYTHONPATH at a build's python/ package) and pandas.
"""
import sys

import numpy as np
import pandas as pd

import recknn

folder = sys.argv[1] if len(sys.argv) > 1 else "ml-latest-small"
ratings = pd.read_csv(f"{folder}/ratings.csv")
titles = pd.read_csv(f"{folder}/movies.csv").set_index("movieId")["title"]

# a fixed random 20% of the ratings held out
held = np.random.default_rng(42).random(len(ratings)) < 0.2
train = ratings[~held].rename(columns={"userId": "user", "movieId": "item"})
test = ratings[held].rename(columns={"userId": "user", "movieId": "item"})

model = recknn.ItemKNN(metric="pearson", k=20, shrinkage=100).fit(train[["user", "item", "rating"]])
ours = recknn.evaluate(model, test[["user", "item", "rating"]], n=10)
popular = recknn.evaluate(model, test[["user", "item", "rating"]], n=10, baseline=True)
print(f"recknn {recknn.version()}: {len(train)} training ratings, {len(test)} held out")
print(f"{'':>12} {'precision':>9} {'recall':>9} {'nDCG':>9} {'coverage':>9}")
for name, m in (("item k-NN", ours), ("most popular", popular)):
    print(f"{name:>12} {m['precision']:9.4f} {m['recall']:9.4f} {m['ndcg']:9.4f} {m['coverage']:9.4f}")
print(f"rating RMSE {ours['rmse']:.4f} over {ours['test_pairs']} pairs")

user = int(model.user_ids[0])
items, scores = model.recommend([user], n=5)
print(f"\nuser {user}'s top 5:")
for item, score in zip(items[0], scores[0]):
    print(f"  {score:8.4f}  {titles.get(item, item)}")
film = 1  # Toy Story (1995)
neighbours, sims = model.similar_items([film], n=5)
print(f"\nnearest to {titles.get(film, film)} (Pearson, shrunk by co-raters):")
for item, sim in zip(neighbours[0], sims[0]):
    print(f"  {sim:8.4f}  {titles.get(item, item)}")
