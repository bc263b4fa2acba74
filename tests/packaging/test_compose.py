"""The shipped compose.yaml and Containerfile: two hub nodes that make one cluster
(one database, one Redis, one secret), each under its own name, in an image that
never runs as root. No container engine runs here; the nodes the compose file
describes are started as processes by tests/nodes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
# The settings are declared in hub/setting_list.py (hub/settings.py reads them).
SETTINGS_SOURCE = (REPO / "hub" / "setting_list.py").read_text()


def _compose() -> dict[str, Any]:
    loaded = yaml.safe_load((REPO / "compose.yaml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def _hubs() -> dict[str, dict[str, str]]:
    services = _compose()["services"]
    return {name: {k: str(v) for k, v in spec["environment"].items()}
            for name, spec in services.items() if spec.get("image") == "webjobs-hub"}


def test_two_nodes_share_one_database_one_redis_and_one_secret() -> None:
    hubs = _hubs()
    assert len(hubs) >= 2
    shared = ("WEBHUB_DB", "WEBHUB_REDIS_URL", "WEBHUB_SECRET", "WEBJOB_STORE",
              "WEBJOB_HISTORY_STORE")
    for key in shared:
        assert len({env[key] for env in hubs.values()}) == 1, key
    first = next(iter(hubs.values()))
    assert first["WEBHUB_DB"].startswith("postgresql://")
    assert first["WEBJOB_STORE"] == "db" and first["WEBJOB_HISTORY_STORE"] == "sql"
    assert len({env["WEBHUB_NODE"] for env in hubs.values()}) == len(hubs)
    for service, env in hubs.items():  # the others pass debug requests on to this address
        assert env["WEBHUB_NODE_URL"] == f"http://{service}:8700"


def test_every_setting_the_compose_file_sets_is_one_the_hub_reads() -> None:
    for env in _hubs().values():
        for key in env:
            assert f'"{key}"' in SETTINGS_SOURCE, f"{key} is not a hub setting"


def test_the_secret_must_be_given_not_defaulted() -> None:
    for env in _hubs().values():
        assert re.fullmatch(r"\$\{WEBHUB_SECRET:\?[^}]+\}", env["WEBHUB_SECRET"])


def test_the_image_runs_as_its_own_user_and_checks_its_health() -> None:
    text = (REPO / "Containerfile").read_text()
    final_stage = text.rsplit("\nFROM ", 1)[1]
    users = re.findall(r"^USER (\S+)", final_stage, re.M)
    assert users and users[-1] not in ("root", "0")
    assert "HEALTHCHECK" in final_stage
    port = re.search(r"^EXPOSE (\d+)", final_stage, re.M)
    # The entrypoint serves on PORT (tests/packaging/test_containerfile.py runs it).
    assert port is not None and re.search(rf"^\s+PORT={port.group(1)}$", final_stage, re.M)
    for spec in _compose()["services"].values():
        if spec.get("image") == "webjobs-hub":
            assert any(p.endswith(f":{port.group(1)}") for p in spec["ports"])


def test_every_node_is_checked_on_readyz_and_waits_for_healthy_servers() -> None:
    services = _compose()["services"]
    hubs = [name for name, spec in services.items() if spec.get("image") == "webjobs-hub"]
    for name in hubs:
        spec = services[name]
        assert spec["healthcheck"]["test"] == ["CMD", "python", "-m", "hub.probe", "readyz"]
        assert spec["init"] is True
        for server in ("postgres", "redis"):
            assert spec["depends_on"][server] == {"condition": "service_healthy"}, name
            assert services[server]["healthcheck"]["test"][0] == "CMD"
    # One node first: it upgrades the schema and sets the cluster key.
    first, *others = hubs
    for name in others:
        assert services[name]["depends_on"][first] == {"condition": "service_healthy"}
