"""Draws what each ensemble method's learners see, for the method pages of the site.

For every method with a model in the zoo trained on the digits (`digits_<method>_convnet`,
shipped in `model_zoo/files/`: no training, no download), it embeds a sample of the unseen test
digits 6-9 and draws one retrieval grid per learner with
`keras_dml.visualization.plot_learner_retrieval_grids`: the same queries, each learner's own
neighbours (the query's class framed green, others red), titled with its correct first
neighbours. The pictures go to `<output>/<method>_learners.png`.

Usage:
    python docs/make_method_images.py --output docs/images/methods
"""

import argparse
import os
import time

# The ensemble methods with a digits model in the zoo (M-heads has none).
METHODS = ("dc", "hdc", "bier", "abe", "dcml")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="docs/images/methods", help="folder for the PNGs")
    parser.add_argument("--points", type=int, default=300, help="test images searched")
    args = parser.parse_args(argv)

    from keras_dml import zoo
    from keras_dml.data import load_dataset
    from keras_dml.visualization import plot_learner_retrieval_grids, save_figure
    from keras_dml.visualization.report_run import sample_images

    start = time.perf_counter()
    test = load_dataset("digits", split="test", image_size=32)
    images, labels, _ = sample_images(test, args.points, 32, seed=0)
    for method in METHODS:
        model = zoo.load(f"digits_{method}_convnet")
        figure = plot_learner_retrieval_grids(
            model, images, labels, queries=4, k=5, class_names=test.class_names, cell_size=0.6
        )
        path = save_figure(figure, os.path.join(args.output, f"{method}_learners.png"), dpi=72)
        print(f"{path}: {os.path.getsize(path) / 1024:.0f} KiB")
    print(f"{len(labels)} test images, {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
