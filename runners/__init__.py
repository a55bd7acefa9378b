"""Publishers: EnvRunners stepping gymnasium envs, the Algorithm, and numpy learners.

``Algorithm``, ``PPO`` and ``DQN`` are imported on first use: with Ray Tune installed their
base is Tune's ``Trainable``, which takes seconds to import (``algorithm/_tune.py``).
"""

from typing import TYPE_CHECKING

from hookbus.events._public import publish_names

# RLlib's result keys (hookbus.metrics's): RLlib's scripts import them with DEFAULT_MODULE_ID.
from hookbus.metrics import (
    AGENT_EPISODE_RETURNS_MEAN as AGENT_EPISODE_RETURNS_MEAN,
    ENV_RUNNER_RESULTS as ENV_RUNNER_RESULTS,
    ENV_RUNNER_SAMPLING_TIMER as ENV_RUNNER_SAMPLING_TIMER,
    EPISODE_LEN_MAX as EPISODE_LEN_MAX,
    EPISODE_LEN_MEAN as EPISODE_LEN_MEAN,
    EPISODE_LEN_MIN as EPISODE_LEN_MIN,
    EPISODE_RETURN_MAX as EPISODE_RETURN_MAX,
    EPISODE_RETURN_MEAN as EPISODE_RETURN_MEAN,
    EPISODE_RETURN_MIN as EPISODE_RETURN_MIN,
    EVALUATION_ITERATION_TIMER as EVALUATION_ITERATION_TIMER,
    EVALUATION_RESULTS as EVALUATION_RESULTS,
    LEARNER_RESULTS as LEARNER_RESULTS,
    LEARNER_UPDATE_TIMER as LEARNER_UPDATE_TIMER,
    MODULE_EPISODE_RETURNS_MEAN as MODULE_EPISODE_RETURNS_MEAN,
    NUM_AGENT_STEPS_SAMPLED as NUM_AGENT_STEPS_SAMPLED,
    NUM_AGENT_STEPS_SAMPLED_LIFETIME as NUM_AGENT_STEPS_SAMPLED_LIFETIME,
    NUM_ENV_STEPS_SAMPLED as NUM_ENV_STEPS_SAMPLED,
    NUM_ENV_STEPS_SAMPLED_LIFETIME as NUM_ENV_STEPS_SAMPLED_LIFETIME,
    NUM_EPISODES as NUM_EPISODES,
    NUM_EPISODES_LIFETIME as NUM_EPISODES_LIFETIME,
    NUM_MODULE_STEPS_SAMPLED as NUM_MODULE_STEPS_SAMPLED,
    NUM_MODULE_STEPS_SAMPLED_LIFETIME as NUM_MODULE_STEPS_SAMPLED_LIFETIME,
    NUM_MODULE_STEPS_TRAINED as NUM_MODULE_STEPS_TRAINED,
    SYNCH_WORKER_WEIGHTS_TIMER as SYNCH_WORKER_WEIGHTS_TIMER,
    TIMERS as TIMERS,
    TRAINING_ITERATION as TRAINING_ITERATION,
    TRAINING_ITERATION_TIMER as TRAINING_ITERATION_TIMER,
)

from ._errors import AlgorithmStateError as AlgorithmStateError, MainGuardError as MainGuardError
from ._exploration import (
    EpsilonGreedy as EpsilonGreedy,
    SoftQ as SoftQ,
    StochasticSampling as StochasticSampling,
)
from ._lazy import on_first_use as _on_first_use
from ._module_spec import (
    MultiRLModuleSpec as MultiRLModuleSpec,
    RandomRLModule as RandomRLModule,
    RLModuleSpec as RLModuleSpec,
)
from ._rl_module import MultiRLModule as MultiRLModule, RLModule as RLModule
from .algorithm import (
    Learner as Learner,
    MultiLearner as MultiLearner,
    ResultDraft as ResultDraft,
    list_checkpoints as list_checkpoints,
)
from .algorithms import (
    MultiAgentLearner as MultiAgentLearner,
    MultiAgentModule as MultiAgentModule,
    get_trainable_cls as get_trainable_cls,
)
from .algorithms.dqn import (
    DQNConfig as DQNConfig,
    DQNLearner as DQNLearner,
    DQNModule as DQNModule,
    PrioritizedReplayBuffer as PrioritizedReplayBuffer,
    ReplayBuffer as ReplayBuffer,
)
from .algorithms.ppo import (
    PPOConfig as PPOConfig,
    PPOLearner as PPOLearner,
    PPOModule as PPOModule,
    Trajectory as Trajectory,
)
from .app import (
    add_rllib_example_script_args as add_rllib_example_script_args,
    check as check,
    check_learning_achieved as check_learning_achieved,
    convert_to_numpy as convert_to_numpy,
    run_rllib_example_script_experiment as run_rllib_example_script_experiment,
)
from .backends import BACKENDS as BACKENDS
from .backends._base import EnvRunnerHandle as EnvRunnerHandle
from .backends._inline import InlineEnvRunner as InlineEnvRunner
from .backends._process import ProcessEnvRunner as ProcessEnvRunner
from .backends._wire import RemoteError as RemoteError, RemoteTraceback as RemoteTraceback
from .config import (
    DEFAULT_MODULE_ID as DEFAULT_MODULE_ID,
    DEFAULT_POLICY_ID as DEFAULT_POLICY_ID,
    AlgorithmConfig as AlgorithmConfig,
    DefaultModelConfig as DefaultModelConfig,
    PolicySpec as PolicySpec,
)
from .env_runner import (
    EnvRunner as EnvRunner,
    EnvRunnerMetrics as EnvRunnerMetrics,
    SampleRequest as SampleRequest,
    SampleSummary as SampleSummary,
)
from .envs import (
    EnvContext as EnvContext,
    FlattenObservations as FlattenObservations,
    MultiAgentCartPole as MultiAgentCartPole,
    MultiAgentEnv as MultiAgentEnv,
    ObservationPreprocessor as ObservationPreprocessor,
    SingleAgentObservationPreprocessor as SingleAgentObservationPreprocessor,
    TaskSettableEnv as TaskSettableEnv,
    make_multi_agent as make_multi_agent,
    register_env as register_env,
)
from .episodes import (
    ALL_AGENTS as ALL_AGENTS,
    Episode as Episode,
    EpisodeLike as EpisodeLike,
    LearnerLoggers as LearnerLoggers,
    MultiAgentEpisode as MultiAgentEpisode,
    SingleAgentEpisode as SingleAgentEpisode,
    apply_reset as apply_reset,
    apply_step as apply_step,
    reset_agents as reset_agents,
    step_agents as step_agents,
)
from .fleet import EnvRunnerGroup as EnvRunnerGroup
from .reporting import (
    CsvLogger as CsvLogger,
    JsonLogger as JsonLogger,
    TensorBoardLogger as TensorBoardLogger,
    output_callbacks as output_callbacks,
    plot_runs as plot_runs,
)

__all__ = (
    "AGENT_EPISODE_RETURNS_MEAN",
    "ALL_AGENTS",
    "BACKENDS",
    "DEFAULT_MODULE_ID",
    "DEFAULT_POLICY_ID",
    "DQN",
    "ENV_RUNNER_RESULTS",
    "ENV_RUNNER_SAMPLING_TIMER",
    "EPISODE_LEN_MAX",
    "EPISODE_LEN_MEAN",
    "EPISODE_LEN_MIN",
    "EPISODE_RETURN_MAX",
    "EPISODE_RETURN_MEAN",
    "EPISODE_RETURN_MIN",
    "EVALUATION_ITERATION_TIMER",
    "EVALUATION_RESULTS",
    "LEARNER_RESULTS",
    "LEARNER_UPDATE_TIMER",
    "MODULE_EPISODE_RETURNS_MEAN",
    "NUM_AGENT_STEPS_SAMPLED",
    "NUM_AGENT_STEPS_SAMPLED_LIFETIME",
    "NUM_ENV_STEPS_SAMPLED",
    "NUM_ENV_STEPS_SAMPLED_LIFETIME",
    "NUM_EPISODES",
    "NUM_EPISODES_LIFETIME",
    "NUM_MODULE_STEPS_SAMPLED",
    "NUM_MODULE_STEPS_SAMPLED_LIFETIME",
    "NUM_MODULE_STEPS_TRAINED",
    "PPO",
    "SYNCH_WORKER_WEIGHTS_TIMER",
    "TIMERS",
    "TRAINING_ITERATION",
    "TRAINING_ITERATION_TIMER",
    "Algorithm",
    "AlgorithmConfig",
    "AlgorithmStateError",
    "CsvLogger",
    "DQNConfig",
    "DQNLearner",
    "DQNModule",
    "DefaultModelConfig",
    "EnvContext",
    "EnvRunner",
    "EnvRunnerGroup",
    "EnvRunnerHandle",
    "EnvRunnerMetrics",
    "Episode",
    "EpisodeLike",
    "EpsilonGreedy",
    "FlattenObservations",
    "InlineEnvRunner",
    "JsonLogger",
    "Learner",
    "LearnerLoggers",
    "MainGuardError",
    "MultiAgentCartPole",
    "MultiAgentEnv",
    "MultiAgentEpisode",
    "MultiAgentLearner",
    "MultiAgentModule",
    "MultiLearner",
    "MultiRLModule",
    "MultiRLModuleSpec",
    "ObservationPreprocessor",
    "PPOConfig",
    "PPOLearner",
    "PPOModule",
    "PolicySpec",
    "PrioritizedReplayBuffer",
    "ProcessEnvRunner",
    "RLModule",
    "RLModuleSpec",
    "RandomRLModule",
    "RemoteError",
    "RemoteTraceback",
    "ReplayBuffer",
    "ResultDraft",
    "SampleRequest",
    "SampleSummary",
    "SingleAgentEpisode",
    "SingleAgentObservationPreprocessor",
    "SoftQ",
    "StochasticSampling",
    "TaskSettableEnv",
    "TensorBoardLogger",
    "Trajectory",
    "add_rllib_example_script_args",
    "apply_reset",
    "apply_step",
    "check",
    "check_learning_achieved",
    "convert_to_numpy",
    "get_trainable_cls",
    "list_checkpoints",
    "make_multi_agent",
    "output_callbacks",
    "plot_runs",
    "register_env",
    "reset_agents",
    "run_rllib_example_script_experiment",
    "step_agents",
)

if TYPE_CHECKING:
    from .algorithm import Algorithm as Algorithm
    from .algorithms.dqn import DQN as DQN
    from .algorithms.ppo import PPO as PPO

_ON_FIRST_USE = {
    "Algorithm": (".algorithm", "Algorithm"),
    "PPO": (".algorithms.ppo", "PPO"),
    "DQN": (".algorithms.dqn", "DQN"),
}
"""The Algorithm family: each name from its package, imported when first looked up."""

# Objects report this package as their module (for docs and reprs), not the private
# module below it that defines them (the Algorithm family's modules publish theirs).
publish_names(__name__, globals(), [name for name in __all__ if name not in _ON_FIRST_USE])
del publish_names


__getattr__ = _on_first_use(__name__, _ON_FIRST_USE)
