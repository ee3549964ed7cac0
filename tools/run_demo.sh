#!/usr/bin/env bash
# Sets everything up on a fresh machine and runs the quickstart example.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
python -m pip install -q .
python examples/quickstart.py
