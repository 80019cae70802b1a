import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture(scope="module")
def one_torch_thread():
    """Small MLPs train fastest on one thread (and do not oversubscribe a shared machine): use it
    with ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``."""
    torch = pytest.importorskip("torch")
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
