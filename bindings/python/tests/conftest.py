import json
import os
import subprocess

import pandas as pd
import pytest


@pytest.fixture(scope="session")
def source_dir():
    """The repository: $DPMU_SOURCE_DIR (ctest), else the checkout these tests are in."""
    d = os.environ.get("DPMU_SOURCE_DIR")
    if not d:
        d = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
        if not os.path.isfile(os.path.join(d, "experiments", "data", "hsb2.csv")):
            pytest.skip("DPMU_SOURCE_DIR is not set and the tests are not in a dpmu checkout")
    return d


@pytest.fixture(scope="session")
def hsb2_csv(source_dir):
    return os.path.join(source_dir, "experiments", "data", "hsb2.csv")


@pytest.fixture(scope="session")
def hsb2(hsb2_csv):
    return pd.read_csv(hsb2_csv)


@pytest.fixture(scope="session")
def cli():
    exe = os.environ.get("DPMU_EXE")
    if not exe:
        pytest.skip("DPMU_EXE is not set")

    def run(*args):
        out = subprocess.run([exe, *map(str, args)], check=True, capture_output=True, text=True)
        return json.loads(out.stdout)

    return run
