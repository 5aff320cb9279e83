"""Regenerates the README's pictures: a retrieval grid and a t-SNE projection of test embeddings.

It trains Divide & Conquer (2 learners, the demo's configuration) on the offline digits data, then
draws the unseen test classes with `keras_dml.visualization`. `KERAS_DML_CI_BUDGET=1` shrinks the
run (1 epoch, 100 points) for the test that executes this script.

Usage:
    python docs/make_images.py --output docs/images
"""

import argparse
import os
import tempfile
import time


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="docs/images", help="folder for the PNG files")
    parser.add_argument("--epochs", type=int, default=4, help="training epochs")
    parser.add_argument("--points", type=int, default=400, help="test images projected")
    args = parser.parse_args(argv)
    budget = bool(os.environ.get("KERAS_DML_CI_BUDGET"))
    epochs, points = (1, 100) if budget else (args.epochs, args.points)

    from keras_dml.data import load_dataset
    from keras_dml.demo import demo_config
    from keras_dml.training import train
    from keras_dml.visualization import plot_projection, plot_retrieval_grid, save_figure
    from keras_dml.visualization.report_run import sample_images

    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as run_dir:
        model = train(demo_config("dc", epochs), run_dir, verbose=0, report=False)["model"]
    test = load_dataset("digits", split="test", image_size=32)
    images, labels, _ = sample_images(test, points, 32, seed=0)
    names = test.class_names
    pictures = {
        "retrieval_grid.png": plot_retrieval_grid(
            model, images, labels, queries=6, k=6, class_names=names, cell_size=0.9
        ),
        "projection.png": plot_projection(model, images, labels, method="tsne", class_names=names),
    }
    os.makedirs(args.output, exist_ok=True)
    for name, figure in pictures.items():
        path = save_figure(figure, os.path.join(args.output, name), dpi=72)
        print(f"{path}: {os.path.getsize(path) / 1024:.0f} KiB")
    print(f"{epochs} epochs, {len(labels)} test images, {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
