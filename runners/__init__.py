"""Publishers: EnvRunners stepping gymnasium envs, the Algorithm, and numpy learners."""

from hookbus.kernel import (
    Episode as Episode,
    MultiAgentEpisode as MultiAgentEpisode,
    SingleAgentEpisode as SingleAgentEpisode,
)

from ._algorithm import Algorithm as Algorithm
from ._builtin import EnvRunnerMetrics as EnvRunnerMetrics
from ._config import AlgorithmConfig as AlgorithmConfig
from ._env import EnvContext as EnvContext, TaskSettableEnv as TaskSettableEnv
from ._env_runner import EnvRunner as EnvRunner, SampleSummary as SampleSummary
from ._errors import AlgorithmStateError as AlgorithmStateError
from ._exploration import (
    EpsilonGreedy as EpsilonGreedy,
    SoftQ as SoftQ,
    StochasticSampling as StochasticSampling,
)
from ._multi_agent import PolicySpec as PolicySpec
from ._multi_agent_env import (
    MultiAgentCartPole as MultiAgentCartPole,
    MultiAgentEnv as MultiAgentEnv,
    make_multi_agent as make_multi_agent,
)
from .algorithms._multi_module import (
    MultiAgentLearner as MultiAgentLearner,
    MultiAgentModule as MultiAgentModule,
)
from .algorithms.dqn._algorithm import DQN as DQN, DQNConfig as DQNConfig
from .algorithms.dqn._learner import DQNLearner as DQNLearner, DQNModule as DQNModule
from .algorithms.dqn._replay_buffer import (
    PrioritizedReplayBuffer as PrioritizedReplayBuffer,
    ReplayBuffer as ReplayBuffer,
)
from .algorithms.ppo._algorithm import PPO as PPO, PPOConfig as PPOConfig
from .algorithms.ppo._learner import (
    PPOLearner as PPOLearner,
    PPOModule as PPOModule,
    Trajectory as Trajectory,
)
from .backends import BACKENDS as BACKENDS
from .backends._base import EnvRunnerHandle as EnvRunnerHandle
from .backends._group import EnvRunnerGroup as EnvRunnerGroup
from .backends._inline import InlineEnvRunner as InlineEnvRunner
from .backends._process import ProcessEnvRunner as ProcessEnvRunner
from .backends._wire import RemoteError as RemoteError
from .reporting import (
    CsvLogger as CsvLogger,
    JsonLogger as JsonLogger,
    TensorBoardLogger as TensorBoardLogger,
    output_callbacks as output_callbacks,
    plot_runs as plot_runs,
)

__all__ = (
    "BACKENDS",
    "DQN",
    "PPO",
    "Algorithm",
    "AlgorithmConfig",
    "AlgorithmStateError",
    "CsvLogger",
    "DQNConfig",
    "DQNLearner",
    "DQNModule",
    "EnvContext",
    "EnvRunner",
    "EnvRunnerGroup",
    "EnvRunnerHandle",
    "EnvRunnerMetrics",
    "Episode",
    "EpsilonGreedy",
    "InlineEnvRunner",
    "JsonLogger",
    "MultiAgentCartPole",
    "MultiAgentEnv",
    "MultiAgentEpisode",
    "MultiAgentLearner",
    "MultiAgentModule",
    "PPOConfig",
    "PPOLearner",
    "PPOModule",
    "PolicySpec",
    "PrioritizedReplayBuffer",
    "ProcessEnvRunner",
    "RemoteError",
    "ReplayBuffer",
    "SampleSummary",
    "SingleAgentEpisode",
    "SoftQ",
    "StochasticSampling",
    "TaskSettableEnv",
    "TensorBoardLogger",
    "Trajectory",
    "make_multi_agent",
    "output_callbacks",
    "plot_runs",
)

# Objects report this package as their module (for docs and reprs), not the private
# module below it that defines them.
for _name in __all__:
    _obj = globals()[_name]
    _module = getattr(_obj, "__module__", "")
    if _module.startswith(__name__ + ".") and "._" in _module[len(__name__) :]:
        _obj.__module__ = __name__
del _name, _obj, _module
