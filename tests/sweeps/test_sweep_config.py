"""Sweep configs: parsing (TOML, JSON, YAML, Python), expansion into cells, stable ids, and clear
errors naming the field (unknown agent/env, bad ε, missing field, wrong types)."""

import json
import shlex
from pathlib import Path

import numpy as np
import pytest

from privenv.cli import main
from privenv.sweep import (
    Cell,
    Configuration,
    SweepConfig,
    SweepConfigError,
    load_config,
    run_cell,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "demo-sweep.toml"


def small(**top) -> dict:
    """A small config as the dict a config file parses to."""
    cfg = {
        "name": "small",
        "runs": 6,
        "chunk": 4,
        "horizon": 300,
        "instances": [{"env": "HuberBandit-v0", "params": {"inlier": "pareto"},
                       "grid": {"alpha": [0.02, 0.1]}}],
        "agents": [{"name": "ucb1"}, {"name": "prae-c", "grid": {"epsilon": [0.5, 1.0]}}],
    }
    cfg.update(top)
    return cfg


def test_the_example_expands_to_its_documented_grid():
    cfg = load_config(EXAMPLE).validate()
    assert cfg.name == "demo-sweep" and cfg.runs == 30 and cfg.chunk == 10
    assert len(cfg.configurations) == 2 * 7  # 2 instances × (ucb1 + 3 agents × 2 ε)
    cells = cfg.cells()
    assert len(cells) == 14 * 3
    assert cfg.source == EXAMPLE.read_text()
    assert "name" in cfg.source and "# Fields" in cfg.source  # the commented header


def test_expansion_order_chunks_and_defaults():
    cfg = SweepConfig.from_mapping(small()).validate()
    described = [(c.env_kwargs["alpha"], c.agent, dict(c.agent_kwargs))
                 for c in cfg.configurations]
    assert described == [
        (0.02, "ucb1", {}), (0.02, "prae-c", {"epsilon": 0.5}), (0.02, "prae-c", {"epsilon": 1.0}),
        (0.1, "ucb1", {}), (0.1, "prae-c", {"epsilon": 0.5}), (0.1, "prae-c", {"epsilon": 1.0}),
    ]
    assert all(c.env_kwargs["inlier"] == "pareto" and c.horizon == 300
               for c in cfg.configurations)
    cells = cfg.cells()
    assert [(c.first_run, c.n_runs) for c in cells[:2]] == [(0, 4), (4, 2)]  # 6 runs, chunks of 4
    assert len(cells) == 12 and len({c.cell_id for c in cells}) == 12
    assert all(c.seed == 0 and c.n_checkpoints == 40 for c in cells)
    # one config_id per configuration, shared by its chunks, whatever the chunking
    assert cfg.config_ids() == [c.config_id for c in cells[::2]]
    assert all(a.config_id == b.config_id for a, b in zip(cells[::2], cells[1::2], strict=True))
    whole = SweepConfig(cfg.configurations, runs=6, chunk=6, seed=0, n_checkpoints=40)
    assert whole.config_ids() == cfg.config_ids()


def test_horizon_defaults_to_the_envs_and_instances_override_it():
    data = small()
    del data["horizon"]
    data["instances"].append({"env": "HuberBandit-v0", "horizon": 500})
    cfg = SweepConfig.from_mapping(data).validate()
    assert {c.horizon for c in cfg.configurations} == {100_000, 500}


def test_cell_ids_are_stable_and_config_hash_ignores_name_and_order():
    cell = Cell("HuberBandit-v0", {"alpha": 0.05}, "prae-c", {"epsilon": 0.5}, 1000, 0, 10, 5)
    # pinned: a change here makes every existing store unresumable
    assert cell.cell_id == "48744285ad0e11f14dc2"
    assert cell.config_id == "d49c4c44dfbd01c26949"
    assert Cell.from_dict(json.loads(json.dumps(cell.to_dict()))).cell_id == cell.cell_id
    other_chunk = Cell("HuberBandit-v0", {"alpha": 0.05}, "prae-c", {"epsilon": 0.5}, 1000, 0,
                       15, 5)
    assert other_chunk.config_id == cell.config_id and other_chunk.cell_id != cell.cell_id

    a = SweepConfig.from_mapping(small())
    b = SweepConfig.from_mapping(small(name="renamed"))
    reordered = small()
    reordered["agents"] = reordered["agents"][::-1]
    c = SweepConfig.from_mapping(reordered)
    assert a.config_hash == b.config_hash == c.config_hash
    assert SweepConfig.from_mapping(small(seed=1)).config_hash != a.config_hash
    assert SweepConfig.from_mapping(small(runs=8)).config_hash != a.config_hash


def test_toml_json_yaml_and_python_give_the_same_sweep(tmp_path):
    data = small()
    (tmp_path / "s.json").write_text(json.dumps(data))
    toml = """
name = "small"
runs = 6
chunk = 4
horizon = 300
[[instances]]
env = "HuberBandit-v0"
params = { inlier = "pareto" }
grid = { alpha = [0.02, 0.1] }
[[agents]]
name = "ucb1"
[[agents]]
name = "prae-c"
grid = { epsilon = [0.5, 1.0] }
"""
    (tmp_path / "s.toml").write_text(toml)
    hashes = {load_config(tmp_path / "s.toml").config_hash,
              load_config(tmp_path / "s.json").config_hash,
              SweepConfig.from_mapping(data).config_hash}
    yaml = pytest.importorskip("yaml")
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(data))
    hashes.add(load_config(tmp_path / "s.yaml").config_hash)
    assert len(hashes) == 1


def test_python_configurations_with_numpy_values():
    conf = Configuration("HuberBandit-v0", {"alpha": np.float64(0.1)}, "prae-c",
                         {"epsilon": np.float32(0.5)}, np.int64(200))
    cfg = SweepConfig((conf,), runs=np.int64(3)).validate()
    c = cfg.configurations[0]
    assert type(c.env_kwargs["alpha"]) is float and type(c.agent_kwargs["epsilon"]) is float
    assert cfg.cells()[0].n_runs == 3 and cfg.chunk == 3
    with pytest.raises(SweepConfigError, match="parameter values must be numbers"):
        SweepConfig((Configuration("HuberBandit-v0", {"alpha": object()}, "ucb1", {}),),
                    runs=2).validate()


def test_duplicate_configurations_are_an_error():
    with pytest.raises(SweepConfigError, match="listed twice"):
        SweepConfig.from_mapping(small(agents=[{"name": "ucb1"}, {"name": "ucb1"}])).validate()


def _error(data) -> str:
    with pytest.raises(SweepConfigError) as info:
        SweepConfig.from_mapping(data).validate()
    return str(info.value)


@pytest.mark.parametrize(
    "change, fragments",
    [
        # unknown names
        ({"agents": [{"name": "nope"}]}, ["agents[0].name", "unknown agent 'nope'", "prae-c"]),
        ({"instances": [{"env": "Nope-v0"}]},
         ["instances[0].env", "unknown env 'Nope-v0'", "HuberBandit-v0"]),
        ({"instances": [{"env": "BestArmIdentification-RL-v0"}]},
         ["instances[0].env", "an RL id", "research id 'BestArmIdentification-v0'"]),
        # bad ε, caught by building the agent once before anything runs
        ({"agents": [{"name": "prae-c", "params": {"epsilon": -1}}]},
         ["agents[0]", "prae-c", "epsilon", "-1"]),
        ({"agents": [{"name": "prae-c", "grid": {"epsilon": [0.5, 0.0]}}]},
         ["agents[0][epsilon=0.0]", "epsilon"]),
        ({"instances": [{"env": "HuberBandit-v0", "params": {"alpha": 1.5}}]},
         ["instances[0]", "alpha", "1.5"]),
        # missing fields
        ({"runs": None}, ["missing required field 'runs'"]),
        ({"agents": None}, ["missing required field 'agents'"]),
        ({"instances": None}, ["missing required field 'instances'"]),
        ({"agents": [{"grid": {"epsilon": [1.0]}}]},
         ["agents[0]", "missing required field 'name'"]),
        ({"instances": [{"params": {}}]}, ["instances[0]", "missing required field 'env'"]),
        # wrong types and values
        ({"runs": "20"}, ["runs must be an integer", "'20'"]),
        ({"runs": 0}, ["runs must be an integer in [1"]),
        ({"chunk": 2.5}, ["chunk must be an integer"]),
        ({"seed": -1}, ["seed must be an integer in [0"]),
        ({"horizon": True}, ["horizon must be an integer"]),
        ({"agents": {"name": "ucb1"}}, ["agents must be a non-empty list of tables"]),
        ({"agents": []}, ["agents must be a non-empty list of tables"]),
        ({"agents": [{"name": "prae-c", "grid": {"epsilon": 0.5}}]},
         ["agents[0].grid.epsilon must be a non-empty list"]),
        ({"agents": [{"name": "prae-c", "params": [1]}]}, ["agents[0].params must be a table"]),
        ({"agents": [{"name": "prae-c", "params": {"epsilon": 1.0},
                      "grid": {"epsilon": [0.5]}}]}, ["'epsilon' is in both params and grid"]),
        ({"name": 3}, ["name must be a string"]),
        # unknown fields and parameters
        ({"horizn": 5}, ["unknown field 'horizn'", "allowed fields"]),
        ({"agents": [{"name": "ucb1", "epsilon": 1.0}]}, ["unknown field 'epsilon' in agents[0]"]),
        ({"agents": [{"name": "ucb1", "params": {"epsilon": 1.0}}]},
         ["agent 'ucb1' has no parameter 'epsilon'", "parameters"]),
        ({"instances": [{"env": "HuberBandit-v0", "params": {"bogus": 1}}]},
         ["env 'HuberBandit-v0' has no parameter 'bogus'", "alpha"]),
        ({"instances": [{"env": "HuberBandit-v0", "params": {"horizon": 10}}]},
         ["set the horizon with instances[0].horizon"]),
        # an agent's problem quantities are the env's, and its family must be the env's
        ({"agents": [{"name": "ucb1", "params": {"K": 7}}]},
         ["agents[0]", "K is the env's (K=5 on HuberBandit-v0); got K=7"]),
        ({"agents": [{"name": "ttucb"}]},
         ["agents[0]", "agent 'ttucb' runs on best-arm identification envs "
          "(BestArmIdentification-v0); got HuberBandit-v0"]),
    ],
)
def test_config_errors_name_the_field(change, fragments):
    data = small()
    for key, value in change.items():
        if value is None:
            del data[key]
        else:
            data[key] = value
    message = _error(data)
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_file_errors(tmp_path):
    with pytest.raises(SweepConfigError, match="cannot read sweep config"):
        load_config(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("runs = = 3\n")
    with pytest.raises(SweepConfigError, match="not valid TOML"):
        load_config(bad)
    other = tmp_path / "sweep.txt"
    other.write_text("runs = 3\n")
    with pytest.raises(SweepConfigError, match=r"must end in \.toml"):
        load_config(other)


def test_config_errors_on_the_command_line(tmp_path, capsys):
    cfg = tmp_path / "bad.json"
    cfg.write_text(json.dumps(small(agents=[{"name": "prae-c", "params": {"epsilon": -1}}])))
    assert main(["sweep", str(cfg), "--store", str(tmp_path / "s.sqlite")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    assert captured.err.startswith("privenv sweep: error: instances[0][alpha=0.02] × agents[0]")
    assert "epsilon" in captured.err
    assert not (tmp_path / "s.sqlite").exists()  # nothing written before validation passes


def test_a_cell_equals_its_privenv_run_command(capsys):
    cell = Cell("HuberBandit-v0", {"alpha": 0.1, "inlier": "pareto"}, "prae-c",
                {"epsilon": 0.5}, 400, 3, 5, 2)
    result = run_cell(cell)
    assert main([*shlex.split(cell.command())[1:], "--format", "json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert (s["first_run"], s["runs"], s["seed"]) == (5, 2, 3)
    assert s["env_kwargs"] == {"alpha": 0.1, "inlier": "pareto"}
    assert s["regret_mean"] == pytest.approx(float(result.regret.mean()), rel=1e-12)


def test_progress_line_of_a_best_arm_identification_cell():
    """No regret in best-arm identification: the line gives the stopping time, the wrong
    recommendations among the runs that stopped, and apart from them the runs that reached the
    budget (which recommend nothing: not wrong answers)."""
    from privenv.sweep import describe_result

    cell = Cell("BestArmIdentification-v0", {"instance": "mu3"}, "ttucb", {}, 10_000, 0, 0, 4)
    result = run_cell(cell)
    line = describe_result(cell, result)
    tau = result.episode["stopping_time"]
    assert "regret" not in line
    assert f"stopping time {np.mean(tau):.6g} ± {np.std(tau, ddof=1):.3g}" in line
    assert ", 0 wrong of 4 stopped runs [" in line  # μ3 is easy: every run stops, rightly
    # a budget far too small for CTB-TT at ε = 0.5: no run stops, and none is called wrong
    short = Cell("BestArmIdentification-v0", {"instance": "mu3"}, "ctb-tt", {"epsilon": 0.5},
                 300, 0, 0, 3)
    result = run_cell(short)
    assert (result.episode["recommendation"] == -1).all()
    assert ", 0 wrong of 0 stopped runs, 3 reached the budget [" in describe_result(short, result)
    huber = Cell("HuberBandit-v0", {}, "ucb1", {}, 200, 0, 0, 2)
    assert "final regret" in describe_result(huber, run_cell(huber))
