"""Every Lua script of the table service is cluster-safe: it names each key it
touches through ``KEYS`` (never builds a key name from ``ARGV``), the keys the
service passes it share one hash slot, and it runs on a real 3-master Redis
Cluster -- where Redis itself refuses a script touching keys of another slot
(checked too, so the run would catch a script that did)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence

import pytest
from redis.crc import key_slot

from tables import LiveConfig, ServiceUnavailable, TableService, audit, scripts
from tables.client import make_client
from tables.keys import Keys

SCRIPTS = {
    name: getattr(module, name)
    for module in (scripts, audit)
    for name in dir(module)
    if name.endswith("_LUA")
}
# commands whose first argument is no key; XINFO: the key follows the subcommand
NO_KEY = {"TIME", "PUBLISH"}
SUBCOMMAND = {"XINFO"}
CALL = re.compile(r"redis\.call\(\s*'(\w+)'\s*(?:,\s*([^,)]+))?(?:,\s*([^,)]+))?")


def key_args(lua: str) -> list[tuple[str, str]]:
    """(command, key expression) of every ``redis.call`` that takes a key."""
    out = []
    for cmd, first, second in CALL.findall(lua):
        cmd = cmd.upper()
        if cmd in NO_KEY:
            continue
        out.append((cmd, (second if cmd in SUBCOMMAND else first).strip()))
    return out


def test_the_scripts_are_found() -> None:
    assert {"CAS_LUA", "SHARD_TICK_LUA", "RELEASE_LUA", "SWAP_LUA", "RECORD_LUA"} <= set(SCRIPTS)
    assert "AUDIT_ADD_LUA" in SCRIPTS


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_every_key_a_script_touches_is_declared(name: str) -> None:
    lua = SCRIPTS[name]
    loop_vars = set(re.findall(r"for\s+\w+\s*,\s*(\w+)\s+in\s+ipairs\(KEYS\)", lua))
    calls = key_args(lua)
    assert calls, name
    for cmd, key in calls:
        assert re.fullmatch(r"KEYS\[\d+\]", key) or key in loop_vars, (name, cmd, key)


def test_the_keys_of_each_script_share_a_slot() -> None:
    k = Keys("durak:", timer_shards=8)
    groups: list[Sequence[str]] = [
        k.table_keys("AbCdEf12"),  # CAS
        [k.user(42), k.user_claim(42)],  # SWAP
        [k.audit, k.audit_refused],  # AUDIT_ADD
        *(  # SHARD_TICK
            [k.timer_lease(s), k.timer_shard(s), k.timer_served(s), k.timer_repair(s)]
            for s in range(8)
        ),
        [k.tables, k.tables_exp],  # the index's pipelines
    ]
    for keys in groups:
        assert len({key_slot(key.encode()) for key in keys}) == 1, keys


@pytest.fixture
async def cluster_svc(redis_cluster_url: str, redis_prefix: str) -> AsyncIterator[TableService]:
    config = LiveConfig(prefix=redis_prefix)
    async with TableService(make_client(redis_cluster_url, config), config, owns_client=True) as s:
        yield s


async def test_every_script_runs_on_the_cluster(cluster_svc: TableService) -> None:
    k, kv = cluster_svc.keys, cluster_svc.kv
    run: dict[str, tuple[list[str], list[str | int]]] = {
        "CAS_LUA": (k.table_keys("t1"), [0, "", 60_000, 8, 1, 0, "", "", "", 16, "x", "1"]),
        "SHARD_TICK_LUA": (
            [k.timer_lease(1), k.timer_shard(1), k.timer_served(1), k.timer_repair(1)],
            ["me", 1, 2, 60_000, 10, 3, "1"],
        ),
        "RELEASE_LUA": ([k.timer_shard(1)], ["t1", 2, ""]),
        "LEASE_LUA": ([k.timer_lease(1)], ["me", 1, 2, 60_000]),
        "SWAP_LUA": ([k.user(1), k.user_claim(1)], ["", "t1", 60_000, 1_000]),
        "RECORD_LUA": ([k.stats(1)], ["t1:1", 60_000, 200, "chuvash:games", 1]),
        "FOLLOWED_UP_LUA": ([k.table("t1")], [1]),
        "LEAVE_CHARGED_LUA": ([k.table("t1")], [1, 7]),
        "AUDIT_ADD_LUA": ([k.audit, k.audit_refused], [100, "actor", "ops"]),
        "SETTLE_CLAIM_LUA": ([k.user_claim(1)], ["t1"]),
        "ARENA_CAS_LUA": (
            [cluster_svc.arenas.key("a1"), cluster_svc.arenas.games_key("a1")],
            [0, "{}", 60_000, "{}"],
        ),
        "CHAT_SWAP_LUA": ([cluster_svc.arenas.chat_key(-1)], ["", "a1", 60_000]),
    }
    assert set(run) == set(SCRIPTS)
    for name, (keys, args) in run.items():
        assert await kv.script(SCRIPTS[name])(keys, args) is not None, name


async def test_the_cluster_refuses_a_key_of_another_slot(cluster_svc: TableService) -> None:
    k, kv = cluster_svc.keys, cluster_svc.kv
    others = [f"{k.prefix}{{x{i}}}" for i in range(64)]
    other = next(o for o in others if key_slot(o.encode()) != key_slot(k.table("t1").encode()))
    sneaky = kv.script("redis.call('SET', KEYS[1], 1); return redis.call('GET', ARGV[1])")
    with pytest.raises(ServiceUnavailable, match=r"slot|non local"):
        await sneaky([k.table("t1")], [other])
    with pytest.raises(ServiceUnavailable, match=r"slot|CROSSSLOT"):
        await kv.script(SCRIPTS["SWAP_LUA"])([k.user(1), k.user_claim(2)], ["", "t", 1, 0])
