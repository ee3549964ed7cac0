"""Where the time goes: per-op and per-node time of bench/models.py's models on our engine.

Usage: WEBNN_NUM_THREADS=1 python bench/profile_models.py [--models det rec ...] [--runs 20]
Each model is imported as in bench/models.py, dispatched once to build its plan, then timed node
by node over --runs dispatches (MLGraph.set_profiling / MLGraph.profile).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from models import ALL_MODELS, WHEEL_MODELS, Ours, model_cases
from webnn.profile import profile_table


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--models", nargs="+", default=ALL_MODELS, choices=ALL_MODELS + WHEEL_MODELS
    )
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    for name, (model, feed, folded) in model_cases(args.models).items():
        ours = Ours(model, feed, folded)
        ours.run()
        ours.graph.set_profiling(True)
        for _ in range(args.runs):
            ours.run()
        print(f"== {name} (threads: {os.environ.get('WEBNN_NUM_THREADS', 'default')})")
        print(profile_table(ours.graph.profile, top=args.top))
        print()


if __name__ == "__main__":
    main()
