"""Test the numpy PPO learner: gradients, GAE, reproducibility, state, settings, learning."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from hookbus.events.codec import decode_msgpack, encode_msgpack
from hookbus.runners import PPOConfig, PPOLearner, PPOModule, Trajectory
from hookbus.runners.algorithms import _nn
from hookbus.runners.algorithms._nn import MLP, Adam, Params, copy_into, one_hot_columns
from hookbus.runners.algorithms.ppo._learner import compute_gae, explained_variance

OBS_SPACE = gym.spaces.Box(-1.0, 1.0, (4,))


def minibatches_of(size: int) -> PPOConfig:
    """Return a config of PPO's defaults but for ``minibatch_size``."""
    return PPOConfig().training(minibatch_size=size)


def split_settings(settings: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split ``settings`` into the config's training settings and the learner's arguments."""
    module = {"model_hiddens", "model_activation", "vf_share_layers"}
    training = {k: v for k, v in settings.items() if k not in module}
    return training, {k: v for k, v in settings.items() if k in module}


def numeric_gradients(loss: Callable[[], float], params: Params, eps: float = 1e-6) -> Params:
    """Return central finite differences of ``loss`` for every entry of ``params``."""
    grads: Params = {}
    for name, p in params.items():
        g = np.zeros_like(p)
        for i in np.ndindex(p.shape):
            old = p[i]
            p[i] = old + eps
            up = loss()
            p[i] = old - eps
            down = loss()
            p[i] = old
            g[i] = (up - down) / (2 * eps)
        grads[name] = g
    return grads


def random_trajectories(
    module: PPOModule, rng: np.random.Generator, lengths: tuple[int, ...] = (7, 5, 9)
) -> list[Trajectory]:
    """Return trajectories of random observations with actions sampled from ``module``."""
    trajectories = []
    for i, t_len in enumerate(lengths):
        obs = rng.uniform(-1.0, 1.0, size=(t_len + 1, module.obs_dim))
        actions = module.forward_exploration(obs[:-1], rng)
        rewards = rng.normal(1.0, 0.5, size=t_len)
        trajectories.append(Trajectory(obs, actions, rewards, terminated=i % 2 == 0))
    return trajectories


# --- the MLP and Adam ----------------------------------------------------------------------


def test_mlp_backward_matches_finite_differences() -> None:
    rng = np.random.default_rng(0)
    net = MLP([3, 5, 4, 2], rng, dtype=np.float64)
    for p in net.params.values():  # non-zero biases, so that they matter in the check
        p += rng.normal(0.0, 0.3, size=p.shape)
    x = rng.normal(size=(6, 3))
    weights = rng.normal(size=(6, 2))  # loss = sum(weights * out), so d loss / d out = weights

    out, inputs = net.forward(x)
    grads = net.backward(inputs, weights)
    expected = numeric_gradients(lambda: float((weights * net(x)).sum()), net.params)

    np.testing.assert_allclose(net(x), out, rtol=1e-12)
    assert grads.keys() == net.params.keys()
    for name, g in grads.items():
        np.testing.assert_allclose(g, expected[name], rtol=1e-6, atol=1e-8, err_msg=name)


def one_hot_rows(rng: np.random.Generator, rows: int, width: int, hot: int) -> np.ndarray:
    """Return float32 rows [rows, width], each one-hot in one of the first ``hot`` columns
    (few hot columns: many rows share one, so the gradient's sums have several terms)."""
    x = np.zeros((rows, width), dtype=np.float32)
    x[np.arange(rows), rng.integers(0, hot, rows)] = 1.0
    return x


def test_one_hot_columns_finds_rows_with_a_single_one_only() -> None:
    x = one_hot_rows(np.random.default_rng(0), 40, 50, 50)
    np.testing.assert_array_equal(one_hot_columns(x), x.argmax(axis=1))
    for bad in (2.0, 0.5, -1.0, np.nan):
        y = x.copy()
        y[3, (x[3].argmax() + 1) % 50] = bad  # a second non-zero in row 3
        assert one_hot_columns(y) is None, bad
        y = x.copy()
        y[3, x[3].argmax()] = bad  # row 3's one replaced
        assert one_hot_columns(y) is None, bad
    assert one_hot_columns(np.zeros((4, 50), np.float32)) is None
    assert one_hot_columns(np.zeros((0, 50), np.float32)) is None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mlp_on_one_hot_rows_gives_the_products_results(dtype: type[np.floating[Any]]) -> None:
    # Taxi's observations (Discrete(500), one-hot) take a gather and a scatter-add instead of
    # the first layer's products: the outputs are the same bits, the gradients the same up
    # to float rounding (the scatter-add sums in another order than BLAS).
    fast = MLP([500, 64, 64, 6], np.random.default_rng(3), dtype=dtype)
    dense = MLP([500, 64, 64, 6], np.random.default_rng(3), dtype=dtype)
    dense._gather = False  # the products, as before the fast path
    rng = np.random.default_rng(4)
    for p, q in zip(fast.params.values(), dense.params.values(), strict=True):
        p += rng.normal(0.0, 0.3, size=p.shape).astype(dtype)  # biases matter too
        q[...] = p
    x = one_hot_rows(rng, 128, 500, 20).astype(dtype)
    grad_out = rng.normal(size=(128, 6)).astype(dtype)

    np.testing.assert_array_equal(fast(x), dense(x))
    out, inputs = fast.forward(x)
    dense_out, dense_inputs = dense.forward(x)
    np.testing.assert_array_equal(out, dense_out)
    grads = fast.backward(inputs, grad_out)
    dense_grads = dense.backward(dense_inputs, grad_out)
    for name, g in grads.items():
        assert g.dtype == dense_grads[name].dtype
        if name == "w0":
            scale = float(np.abs(dense_grads[name]).max())
            atol = scale * (1e-6 if dtype == np.float32 else 1e-14)
            np.testing.assert_allclose(g, dense_grads[name], rtol=0, atol=atol)
        else:
            np.testing.assert_array_equal(g, dense_grads[name], err_msg=name)


def test_a_ppo_update_on_one_hot_observations_keeps_the_products_numbers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    space = gym.spaces.Box(0.0, 1.0, (500,))
    rng = np.random.default_rng(5)
    trajectories = []
    for t_len, terminated in ((150, True), (200, False), (90, False)):
        obs = one_hot_rows(rng, t_len + 1, 500, 60)
        actions = rng.integers(0, 6, t_len)
        trajectories.append(Trajectory(obs, actions, rng.normal(-1.0, 3.0, t_len), terminated))
    fast = PPOLearner(space, gym.spaces.Discrete(6), seed=0)
    monkeypatch.setattr(_nn, "GATHER_MIN_WIDTH", 10**9)  # learners built now take products
    dense = PPOLearner(space, gym.spaces.Discrete(6), seed=0)

    # The forward passes (values, old logits and logp, GAE) are the same bits.
    for name, column in vars(fast.postprocess(trajectories)).items():
        np.testing.assert_array_equal(column, vars(dense.postprocess(trajectories))[name], name)
    stats, dense_stats = fast.update(trajectories), dense.update(trajectories)
    assert stats.keys() == dense_stats.keys()
    for name, value in stats.items():
        assert value == pytest.approx(dense_stats[name], rel=1e-4, abs=1e-6), name
    for name, value in fast.module.get_state().items():
        np.testing.assert_allclose(value, dense.module.params[name], rtol=0, atol=1e-5)


def test_adam_clips_by_global_norm_and_reports_the_raw_norm() -> None:
    params: Params = {"a": np.zeros(3), "b": np.zeros(2)}
    opt = Adam(params, lr=0.1, grad_clip=1.0)
    grads = {"a": np.array([3.0, 0.0, 0.0]), "b": np.array([0.0, 4.0])}

    norm = opt.step(grads)

    assert norm == pytest.approx(5.0)
    # The first moment holds (1 - beta1) * the clipped gradient, whose norm is grad_clip.
    m_norm = math.sqrt(sum(float(np.sum(m * m)) for m in opt.m.values()))
    assert m_norm == pytest.approx(0.1 * 1.0, rel=1e-5)
    # Adam's first step moves every coordinate with a gradient by lr against its sign.
    np.testing.assert_allclose(params["a"], [-0.1, 0.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(params["b"], [0.0, -0.1], atol=1e-6)


def test_adam_minimises_a_quadratic() -> None:
    target = np.array([1.0, -2.0, 3.0])
    params: Params = {"x": np.zeros(3)}
    opt = Adam(params, lr=0.05)
    for _ in range(500):
        opt.step({"x": 2.0 * (params["x"] - target)})
    np.testing.assert_allclose(params["x"], target, atol=1e-2)


# --- the PPO loss --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action_space", "settings"),
    [
        pytest.param(gym.spaces.Discrete(3), {}, id="discrete-surrogate-vf"),
        pytest.param(
            gym.spaces.Discrete(3),
            {"entropy_coeff": 0.3, "use_kl_loss": True, "kl_coeff": 0.7, "vf_clip_param": 0.5},
            id="discrete-all-terms-vf-clipped",
        ),
        pytest.param(
            gym.spaces.Box(-1.0, 1.0, (2,)),
            {"entropy_coeff": 0.3, "use_kl_loss": True, "kl_coeff": 0.7, "vf_clip_param": 0.5},
            id="box-all-terms-vf-clipped",
        ),
        pytest.param(
            gym.spaces.MultiDiscrete([2, 3]),
            {"entropy_coeff": 0.3, "use_kl_loss": True, "kl_coeff": 0.7},
            id="multi-discrete-all-terms",
        ),
        pytest.param(
            gym.spaces.Discrete(3),
            {"entropy_coeff": 0.3, "vf_share_layers": True},
            id="shared-trunk",
        ),
        pytest.param(
            gym.spaces.Box(-1.0, 1.0, (2,)),
            {"vf_share_layers": True, "model_activation": "relu"},
            id="shared-relu-trunk-box",
        ),
        pytest.param(gym.spaces.Discrete(3), {"model_activation": "linear"}, id="linear-separate"),
    ],
)
def test_ppo_loss_gradients_match_finite_differences(
    action_space: Any, settings: dict[str, Any]
) -> None:
    base = {"use_kl_loss": False, "clip_param": 0.1, "vf_loss_coeff": 0.5, "minibatch_size": 4}
    training, module = split_settings(base | settings)
    learner = PPOLearner(
        OBS_SPACE,
        action_space,
        PPOConfig().training(**training),
        **module,
        model_hiddens=(5, 4),
        dtype=np.float64,
    )
    rng = np.random.default_rng(1)
    batch = learner.postprocess(random_trajectories(learner.module, rng))
    # Move away from the sampling weights, so that ratios differ from 1 and some get clipped.
    for p in learner.module.params.values():
        p += rng.normal(0.0, 0.2, size=p.shape)

    total, grads, stats = learner.compute_loss_and_gradients(batch)
    expected = numeric_gradients(
        lambda: learner.compute_loss_and_gradients(batch)[0], learner.module.params
    )

    ratio = np.exp(learner.module.action_logp(batch.obs, batch.actions) - batch.action_logp)
    assert np.any(np.abs(ratio - 1.0) > 0.1), "no ratio is clipped: the check misses a branch"
    assert np.any(np.abs(ratio - 1.0) < 0.1), "every ratio is clipped: no surrogate gradient"
    if "vf_clip_param" in settings:
        assert 0.0 < stats["vf_loss"] < stats["vf_loss_unclipped"]
    assert grads.keys() == learner.module.params.keys()
    for name, g in grads.items():
        np.testing.assert_allclose(g, expected[name], rtol=1e-5, atol=1e-8, err_msg=name)
    assert stats["total_loss"] == pytest.approx(total)


def test_loss_stats_follow_rllib_definitions() -> None:
    learner = PPOLearner(OBS_SPACE, gym.spaces.Discrete(2), minibatches_of(4), dtype=np.float64)
    rng = np.random.default_rng(2)
    batch = learner.postprocess(random_trajectories(learner.module, rng))

    total, _, stats = learner.compute_loss_and_gradients(batch)

    # With the sampling weights every ratio is 1 and the KL is 0.
    assert stats["policy_loss"] == pytest.approx(-float(np.mean(batch.advantages)), abs=1e-12)
    assert stats["mean_kl_loss"] == pytest.approx(0.0, abs=1e-12)
    values = learner.module.compute_values(batch.obs)
    assert stats["vf_loss_unclipped"] == pytest.approx(
        float(np.mean((values - batch.value_targets) ** 2))
    )
    assert stats["entropy"] <= math.log(2.0)
    assert total == pytest.approx(stats["policy_loss"] + stats["vf_loss"])


# --- GAE -----------------------------------------------------------------------------------


def test_gae_matches_a_hand_computed_example() -> None:
    rewards = np.array([1.0, 1.0, 1.0])
    values = np.array([0.5, 0.4, 0.3])
    # gamma 0.9, lambda 0.8: deltas r + 0.9 V' - V, then A_t = delta_t + 0.72 A_{t+1}.
    adv, targets = compute_gae(rewards, values, 0.0, gamma=0.9, lambda_=0.8)
    np.testing.assert_allclose(adv, [1.84928, 1.374, 0.7])
    np.testing.assert_allclose(targets, [2.34928, 1.774, 1.0])
    # Truncated: bootstrap V(s_3) = 0.2, so the last delta is 1 + 0.18 - 0.3 = 0.88.
    adv, targets = compute_gae(rewards, values, 0.2, gamma=0.9, lambda_=0.8)
    np.testing.assert_allclose(adv, [1.942592, 1.5036, 0.88])
    np.testing.assert_allclose(targets, [2.442592, 1.9036, 1.18])


def test_gae_with_lambda_one_gives_discounted_returns() -> None:
    rewards = np.array([1.0, 2.0, 3.0])
    _, targets = compute_gae(rewards, np.array([5.0, -1.0, 2.0]), 10.0, gamma=0.5, lambda_=1.0)
    np.testing.assert_allclose(targets, [1 + 0.5 * 2 + 0.25 * 3 + 0.125 * 10, 2 + 1.5 + 2.5, 8.0])


def test_learner_bootstraps_only_non_terminated_trajectories() -> None:
    learner = PPOLearner(OBS_SPACE, gym.spaces.Discrete(2), minibatches_of(1), dtype=np.float64)
    rng = np.random.default_rng(3)
    (tr,) = random_trajectories(learner.module, rng, lengths=(4,))
    cut = Trajectory(tr.observations, tr.actions, tr.rewards, terminated=False)
    ended = Trajectory(tr.observations, tr.actions, tr.rewards, terminated=True)

    gap = learner.postprocess([cut]).value_targets - learner.postprocess([ended]).value_targets

    # The bootstrap term gamma * V(s_T) reaches step t discounted by (gamma * lambda)^(T-1-t).
    v_last = learner.module.compute_values(tr.observations[-1:])[0]
    decay = (0.99 * 0.95) ** np.arange(3, -1, -1)
    np.testing.assert_allclose(gap, decay * 0.99 * v_last, rtol=1e-10)
    assert abs(v_last) > 1e-3


def test_postprocess_standardises_advantages_and_keeps_the_sampling_policy() -> None:
    learner = PPOLearner(OBS_SPACE, gym.spaces.Discrete(2), minibatches_of(1))
    trajectories = random_trajectories(learner.module, np.random.default_rng(4))
    batch = learner.postprocess(trajectories)

    assert len(batch) == sum(len(tr.actions) for tr in trajectories) == 21
    assert float(np.mean(batch.advantages)) == pytest.approx(0.0, abs=1e-6)
    assert float(np.std(batch.advantages)) == pytest.approx(1.0, abs=1e-5)
    obs = np.concatenate([tr.observations[:-1] for tr in trajectories])
    np.testing.assert_array_equal(batch.obs, obs.astype(np.float32))
    np.testing.assert_allclose(
        batch.action_logp, learner.module.action_logp(obs, batch.actions), rtol=1e-6
    )


def test_explained_variance() -> None:
    y = np.array([1.0, 2.0, 3.0, 4.0])
    assert explained_variance(y, y) == 1.0
    assert explained_variance(y, np.full(4, 2.5)) == pytest.approx(0.0)
    assert explained_variance(y, -10 * y) == -1.0  # floored, as RLlib does


# --- the module ----------------------------------------------------------------------------


def test_module_samples_from_the_softmax_of_its_logits() -> None:
    module = PPOModule(OBS_SPACE, gym.spaces.Discrete(3, start=-1), rng=0)
    module.params["pi.b2"][:] = [0.0, 1.0, -1.0]  # a clearly non-uniform policy
    obs = np.tile(np.array([[0.1, -0.2, 0.3, 0.0]], dtype=np.float32), (30_000, 1))

    actions = module.forward_exploration(obs, np.random.default_rng(0))

    assert actions.shape == (30_000,)
    assert actions.dtype == np.int64
    probs = np.exp(module.action_logp(obs[:3], np.array([-1, 0, 1])))
    assert probs.sum() == pytest.approx(1.0, rel=1e-5)
    freqs = np.bincount(actions + 1, minlength=3) / len(actions)
    np.testing.assert_allclose(freqs, probs, atol=0.01)
    logits = module.action_dist_inputs(obs[:1])[0]
    assert module.forward_inference(obs[:1])[0] == int(np.argmax(logits)) - 1


def test_module_shapes_for_box_actions() -> None:
    module = PPOModule(OBS_SPACE, gym.spaces.Box(-2.0, 2.0, (2,)), rng=0)
    obs = np.zeros((8, 4), dtype=np.float32)
    actions = module.forward_exploration(obs, np.random.default_rng(0))
    assert actions.shape == (8, 2)
    assert module.forward_inference(obs).shape == (8, 2)
    assert module.action_logp(obs, actions).shape == (8,)
    assert module.compute_values(obs).shape == (8,)


def test_module_state_round_trip() -> None:
    source = PPOModule(OBS_SPACE, gym.spaces.Discrete(2), rng=1)
    target = PPOModule(OBS_SPACE, gym.spaces.Discrete(2), rng=2)
    obs = np.random.default_rng(5).normal(size=(16, 4))
    assert not np.array_equal(source.compute_values(obs), target.compute_values(obs))

    target.set_state(decode_msgpack(encode_msgpack(source.get_state())))

    np.testing.assert_array_equal(source.compute_values(obs), target.compute_values(obs))
    np.testing.assert_array_equal(
        source.forward_exploration(obs, np.random.default_rng(6)),
        target.forward_exploration(obs, np.random.default_rng(6)),
    )


# --- update, reproducibility and state -----------------------------------------------------


def updated_learner(
    seed: int, trajectories: list[Trajectory]
) -> tuple[PPOLearner, dict[str, float]]:
    learner = PPOLearner(OBS_SPACE, gym.spaces.Discrete(2), minibatches_of(8), seed=seed)
    return learner, learner.update(trajectories)


def test_update_returns_rllib_stat_names_as_floats() -> None:
    config = PPOConfig().training(minibatch_size=8, num_epochs=3)
    learner = PPOLearner(OBS_SPACE, gym.spaces.Discrete(2), config)
    stats = learner.update(random_trajectories(learner.module, np.random.default_rng(7)))

    assert {
        "policy_loss",
        "vf_loss",
        "vf_loss_unclipped",
        "vf_explained_var",
        "entropy",
        "mean_kl_loss",
        "curr_kl_coeff",
        "curr_entropy_coeff",
        "total_loss",
        "num_module_steps_trained",
        "gradients_default_optimizer_global_norm",
        "default_optimizer_learning_rate",
    } <= stats.keys()
    assert all(type(v) is float for v in stats.values())
    assert stats["num_module_steps_trained"] == 21 * 3
    # The KL after 3 epochs is far below kl_target / 2: the coefficient halves (RLlib's rule).
    assert stats["mean_kl_loss"] < 0.005
    assert stats["curr_kl_coeff"] == pytest.approx(0.1)


def test_seeded_updates_are_bit_reproducible() -> None:
    trajectories = random_trajectories(
        PPOModule(OBS_SPACE, gym.spaces.Discrete(2), rng=9), np.random.default_rng(8)
    )
    a, stats_a = updated_learner(0, trajectories)
    b, stats_b = updated_learner(0, trajectories)
    c, _ = updated_learner(1, trajectories)

    assert stats_a == stats_b
    for name, value in a.module.get_state().items():
        np.testing.assert_array_equal(value, b.module.get_state()[name])
    assert not np.array_equal(a.module.params["pi.w0"], c.module.params["pi.w0"])


def test_learner_state_round_trip_gives_identical_updates() -> None:
    trajectories = random_trajectories(
        PPOModule(OBS_SPACE, gym.spaces.Discrete(2), rng=9), np.random.default_rng(10)
    )
    source, _ = updated_learner(0, trajectories)
    target, _ = updated_learner(5, trajectories[1:])

    state = decode_msgpack(encode_msgpack(source.get_state()))
    target.set_state(state)
    stats_source = source.update(trajectories)
    stats_target = target.update(trajectories)

    assert stats_source == stats_target
    for name, value in source.get_state()["module"].items():
        np.testing.assert_array_equal(value, target.get_state()["module"][name])
    obs = trajectories[0].observations
    np.testing.assert_array_equal(
        source.module.forward_inference(obs), target.module.forward_inference(obs)
    )


def test_get_state_returns_copies() -> None:
    learner = PPOLearner(OBS_SPACE, gym.spaces.Discrete(2))
    state = learner.get_state()
    state["module"]["pi.w0"][:] = 0.0
    state["optimizer"]["m"]["pi.w0"][:] = 1.0
    assert np.any(learner.module.params["pi.w0"] != 0.0)
    assert not np.any(learner.get_state()["optimizer"]["m"]["pi.w0"])


# --- bad settings --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "match"),
    [
        ({"lr": -1e-3}, r"lr must be a finite number > 0, got -0\.001"),
        ({"lr": float("nan")}, r"lr must be a finite number > 0, got nan"),
        ({"gamma": 1.5}, r"gamma must be a number in \[0, 1\], got 1\.5"),
        ({"lambda_": -0.1}, r"lambda_ must be a finite number in \[0, 1\], got -0\.1"),
        ({"clip_param": 0.0}, r"clip_param must be a finite number > 0, got 0\.0"),
        ({"entropy_coeff": -0.01}, r"entropy_coeff must be a finite number >= 0, got -0\.01"),
        ({"num_epochs": 0}, r"num_epochs must be an int >= 1, got 0"),
        ({"num_epochs": 2.5}, r"num_epochs must be an int >= 1, got 2\.5"),
        ({"minibatch_size": 0}, r"minibatch_size must be an int >= 1, got 0"),
        ({"grad_clip": 0.0}, r"grad_clip must be None or a number > 0, got 0\.0"),
        ({"kl_target": 0.0}, r"kl_target must be a number > 0, got 0\.0"),
        ({"model_hiddens": ()}, r"model_hiddens must be a non-empty sequence .*, got \(\)"),
    ],
)
def test_bad_settings_raise(settings: dict[str, Any], match: str) -> None:
    training, module = split_settings(settings)
    config = PPOConfig().training(**training)  # a config checks its values at build() only
    with pytest.raises(ValueError, match=match):
        PPOLearner(OBS_SPACE, gym.spaces.Discrete(2), config, **module)


@pytest.mark.parametrize(
    "action_space",
    [gym.spaces.Box(-1.0, 1.0, (2, 2)), gym.spaces.Tuple(())],
)
def test_unsupported_action_space_raises(action_space: Any) -> None:
    with pytest.raises(
        ValueError, match=r"unsupported action space .*Discrete, MultiDiscrete and .* Box"
    ):
        PPOLearner(OBS_SPACE, action_space)


def test_minibatch_larger_than_the_batch_raises() -> None:
    learner = PPOLearner(OBS_SPACE, gym.spaces.Discrete(2), minibatches_of(64))
    trajectories = random_trajectories(learner.module, np.random.default_rng(11))
    with pytest.raises(ValueError, match=r"minibatch_size \(64\) must be <= .*batch \(21\)"):
        learner.update(trajectories)


def test_bad_trajectory_and_state_raise() -> None:
    with pytest.raises(ValueError, match=r"T \+ 1 observations, got 3 observations, 3 actions"):
        Trajectory(np.zeros((3, 4)), np.zeros(3), np.zeros(3), terminated=True)
    module = PPOModule(OBS_SPACE, gym.spaces.Discrete(2))
    state = module.get_state()
    with pytest.raises(ValueError, match=r"'pi.w0' has shape \(3, 64\), expected \(4, 64\)"):
        module.set_state(state | {"pi.w0": np.zeros((3, 64))})
    del state["vf.b2"]
    with pytest.raises(ValueError, match=r"state keys .* do not match the expected keys"):
        module.set_state(state)


# --- learning ------------------------------------------------------------------------------


def test_ppo_learns_cartpole() -> None:
    """Learn through the public API: 8 iterations of 2000 env steps on 8 sub-envs."""
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_envs_per_env_runner=8)
        .training(train_batch_size=2000)
        .debugging(seed=0)
    )
    with config.build() as algo:
        first = algo.train()["env_runners"]["episode_return_mean"]
        for _ in range(7):
            last = algo.train()["env_runners"]["episode_return_mean"]
    # A random policy averages ~22 on CartPole; 8 updates on 2000 steps each reach ~150-200.
    assert first < 30
    assert last > 100


def test_a_bad_state_changes_no_weight_and_no_moment() -> None:
    # Checked whole before anything is copied: a restore that fails leaves nothing half-set.
    params: Params = {"a": np.zeros(2), "b": np.zeros(3)}
    with pytest.raises(ValueError, match=r"'b' has shape \(4,\), expected \(3,\)"):
        copy_into(params, {"a": np.ones(2), "b": np.ones(4)})
    assert not params["a"].any()
    adam = Adam(params, lr=0.1)
    adam.step({"a": np.ones(2), "b": np.ones(3)})
    before = adam.get_state()
    bad = {**before, "step": 7, "m": {"a": np.ones(2), "b": np.ones(3)}, "v": {"a": np.ones(2)}}
    with pytest.raises(ValueError, match="do not match the expected keys"):
        adam.set_state(bad)
    assert encode_msgpack(adam.get_state()) == encode_msgpack(before)
    learner = PPOLearner(OBS_SPACE, gym.spaces.Discrete(2), seed=0)
    state = learner.get_state()
    state["module"] = {k: v + 1 for k, v in state["module"].items()}
    state["rng"] = {**state["rng"], "inc": "not a number"}
    weights = encode_msgpack(learner.get_state())
    with pytest.raises(ValueError, match="not a number"):
        learner.set_state(state)
    assert encode_msgpack(learner.get_state()) == weights
