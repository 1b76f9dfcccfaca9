"""deploy/: the compose file, Helm values, production dagster.yaml and the image's entry points.

No Docker engine or Kubernetes runs here: these tests check the structure of the files and that
every command the containers run exists in this installation (docs/deploy.md says what was not run).
"""

from __future__ import annotations

import importlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import typer
import yaml
from dagster._core.instance.config import dagster_instance_config

from kb_pipeline.cli import app

REPO = Path(__file__).resolve().parents[1]
DEPLOY = REPO / "deploy"
IMAGE_ROOT = "/opt/kb/"
KB_SERVICES = {"code-location", "webserver", "daemon", "serve"}
BIN = Path(sys.executable).parent


def load(name: str) -> dict:
    return yaml.safe_load((DEPLOY / name).read_text("utf-8"))


def kb_commands() -> set[str]:
    group = typer.main.get_group(app)
    return set(group.commands)


def dockerfile_instructions() -> list[tuple[str, str]]:
    text = (DEPLOY / "Dockerfile").read_text("utf-8").replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    return [
        (line.split(maxsplit=1)[0].upper(), line.split(maxsplit=1)[1])
        for line in lines
        if line and not line.startswith("#")
    ]


def check_command(command: list[str]) -> None:
    """The program exists here and accepts the arguments' shape (`--help` of the same command)."""
    program, *args = command
    if program == "kb":
        assert args[0] in kb_commands(), f"`kb {args[0]}` is not a kb command"
        return
    assert (BIN / program).is_file(), f"{program} is not installed"
    if "-m" in args:
        importlib.import_module(args[args.index("-m") + 1])
    if "-w" in args:
        workspace = args[args.index("-w") + 1]
        assert workspace.startswith(IMAGE_ROOT) and (REPO / workspace[len(IMAGE_ROOT) :]).is_file()
    words = [a for a in args if re.fullmatch(r"[a-z][a-z-]*", a)]
    subcommand = words[:2] if program == "dagster" else words[:1]
    result = subprocess.run(
        [str(BIN / program), *subcommand, "--help"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    for option in (a for a in args if a.startswith("-")):
        assert option in result.stdout, f"{program} {' '.join(subcommand)} has no {option}"


def test_production_dagster_yaml_is_a_valid_instance_config(tmp_path):
    shutil.copy(DEPLOY / "dagster.yaml", tmp_path / "dagster.yaml")
    config, _ = dagster_instance_config(str(tmp_path))
    assert config["run_coordinator"]["class"] == "QueuedRunCoordinator"
    assert config["run_retries"] == {
        "enabled": True,
        "max_retries": 2,
        "retry_on_asset_or_op_failure": False,
    }
    assert config["concurrency"]["pools"]["default_limit"] == 1
    limits = {limit["key"] for limit in config["concurrency"]["runs"]["tag_concurrency_limits"]}
    assert limits == {"tenant", "dagster/backfill"}


def test_the_embedding_steps_are_in_the_limited_pool():
    from kb_pipeline.definitions import defs

    graph = defs.get_repository_def().asset_graph
    pools = {key.to_user_string(): graph.get(key).pools for key in graph.get_all_asset_keys()}
    assert pools["chunk_embeddings"] == {"embedding"} and pools["release_index"] == {"embedding"}
    assert pools["parsed_documents"] in (set(), None, frozenset())


def test_compose_services_and_their_commands():
    compose = load("docker-compose.yml")
    services = compose["services"]
    assert set(services) == {"postgres", *KB_SERVICES}
    assert services["postgres"]["image"].startswith("pgvector/pgvector:")
    for name in KB_SERVICES - {"serve"}:
        check_command(services[name]["command"])
    assert services["serve"]["command"] == ["kb", "serve", "--host", "0.0.0.0", "--port", "8080"]
    for name in KB_SERVICES:
        env = services[name]["environment"]
        assert urlsplit(env["KB_DATABASE_URL"]).hostname == "postgres"
        assert urlsplit(env["KB_DAGSTER_STORAGE_URL"]).path == "/dagster"
        assert services[name]["build"]["dockerfile"] == "deploy/Dockerfile"
    init = (DEPLOY / "initdb" / "01-databases.sql").read_text("utf-8")
    assert "CREATE DATABASE dagster" in init


def test_kb_serve_is_a_kb_command():
    if "serve" not in kb_commands():
        pytest.skip("`kb serve` is built on another branch (issue 13 section 1)")
    assert "serve" in kb_commands()


def test_workspace_points_at_the_code_location_service():
    [entry] = load("workspace.yaml")["load_from"]
    server = entry["grpc_server"]
    command = load("docker-compose.yml")["services"]["code-location"]["command"]
    assert server["host"] == "code-location"
    assert str(server["port"]) == command[command.index("-p") + 1]


def test_dockerfile_builds_cpu_torch_and_runs_the_code_location():
    instructions = dockerfile_instructions()
    [base] = [arg for op, arg in instructions if op == "FROM"]
    assert base.startswith("python:3.11")
    runs = " ".join(arg for op, arg in instructions if op == "RUN")
    assert "download.pytorch.org/whl/cpu" in runs and '"torch==2.13.0"' in runs
    for op, arg in instructions:
        if op == "COPY":
            *sources, _ = arg.split()
            assert all((REPO / s).exists() for s in sources), arg
    [cmd] = [arg for op, arg in instructions if op == "CMD"]
    command = json.loads(cmd)
    assert command == load("docker-compose.yml")["services"]["code-location"]["command"]
    check_command(command)
    assert "cp deploy/dagster.yaml" in runs


def test_helm_values_use_the_k8s_run_launcher_and_the_same_limits():
    values = load("helm/values.yaml")
    assert values["runLauncher"]["type"] == "K8sRunLauncher"
    assert values["postgresql"]["enabled"] is False
    [deployment] = values["dagster-user-deployments"]["deployments"]
    args = deployment["dagsterApiGrpcArgs"]
    importlib.import_module(args[args.index("-m") + 1])
    daemon = values["dagsterDaemon"]
    assert daemon["runCoordinator"]["type"] == "QueuedRunCoordinator"
    assert daemon["runRetries"]["maxRetries"] == load("dagster.yaml")["run_retries"]["max_retries"]
    production = load("dagster.yaml")["concurrency"]
    helm = values["concurrency"]
    assert helm["pools"]["defaultLimit"] == production["pools"]["default_limit"]
    assert helm["runs"]["maxConcurrentRuns"] == production["runs"]["max_concurrent_runs"]
    assert helm["runs"]["tagConcurrencyLimits"] == production["runs"]["tag_concurrency_limits"]
