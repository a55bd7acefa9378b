"""One SampleRequest from EnvRunner.sample() to every backend."""

from __future__ import annotations

import pytest

from hookbus.kernel import Bus, ConfigError
from hookbus.runners import EnvRunner, PPOConfig, SampleRequest


@pytest.fixture(params=["inline", "process", "ray"])
def backend(request: pytest.FixtureRequest) -> str:
    """Each backend by name; Ray's runs join the session's local Ray."""
    if request.param == "ray":
        request.getfixturevalue("ray_cluster")
    return str(request.param)


@pytest.mark.anyio
async def test_every_backend_samples_as_the_request_asks(
    small_ppo: PPOConfig, backend: str
) -> None:
    config = small_ppo.env_runners(
        num_env_runners=1, num_envs_per_env_runner=2, backend=backend, num_cpus_per_env_runner=0.5
    )
    async with config.build() as algo:
        (runner,) = algo.env_runner_group.remote_env_runners
        chunks = await runner.sample(SampleRequest(num_timesteps=101, exact=True))
        assert sum(map(len, chunks)) == 101
        summary = await runner.sample_and_get_metrics(SampleRequest(num_episodes=2, exact=True))
        assert summary.num_episodes == 2


def test_a_bad_request_fails_where_it_is_built() -> None:
    with pytest.raises(ConfigError, match=r"takes num_timesteps or num_episodes, not both"):
        SampleRequest(num_timesteps=1, num_episodes=1)
    with pytest.raises(ConfigError, match=r"sample\(num_episodes=0\): expected an int >= 1"):
        SampleRequest(num_episodes=0)
    with pytest.raises(TypeError, match="Unexpected keyword argument 'num_steps'"):
        SampleRequest(num_steps=10)  # type: ignore[call-arg]
    assert SampleRequest() == SampleRequest(random_actions=False)


@pytest.mark.anyio
async def test_sample_and_get_metrics_takes_a_request_or_samples_keywords() -> None:
    config = PPOConfig().environment("CartPole-v1").debugging(seed=0)
    runner = EnvRunner(config, bus=Bus())
    by_request = await runner.sample_and_get_metrics(SampleRequest(num_episodes=2, exact=True))
    by_keywords = await runner.sample_and_get_metrics(num_episodes=3, exact=True)
    assert (by_request.num_episodes, by_keywords.num_episodes) == (2, 3)
    with pytest.raises(TypeError, match="Unexpected keyword argument 'num_steps'"):
        await runner.sample_and_get_metrics(num_steps=10)
