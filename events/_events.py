"""One frozen, tagged msgspec Struct per hook: the typed, serializable record of what happened."""

# No "from __future__ import annotations" here: msgspec resolves string annotations in the
# module named by __module__, which the package rewrites to the public "hookbus.events".
import re
from typing import Any, ClassVar

import msgspec
from msgspec import UNSET, UnsetType

__all__ = (
    "HOOKS",
    "AgentData",
    "AlgorithmInit",
    "BaseEvent",
    "CheckpointLoaded",
    "EnvRunnersRecreated",
    "EnvironmentCreated",
    "EpisodeCreated",
    "EpisodeEnd",
    "EpisodeStart",
    "EpisodeStep",
    "EvaluateEnd",
    "EvaluateOfflineEnd",
    "EvaluateOfflineStart",
    "EvaluateStart",
    "Event",
    "LearnerUpdateEnd",
    "LearnerUpdateStart",
    "OfflineEvalRunnersRecreated",
    "PostprocessTrajectory",
    "RecordingGap",
    "SampleEnd",
    "TrainResult",
)


_WORD_START = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def hook_name_of(class_name: str) -> str:
    """Return the hook name derived from an event class's name: ``OrderPlaced`` ->
    ``on_order_placed``, ``HTTPRequestDone`` -> ``on_http_request_done``."""
    return "on_" + _WORD_START.sub("_", class_name).lower()


DEFINED: "list[type[BaseEvent]]" = []
"""Every subclass of ``BaseEvent``, as defined; ``_registry`` takes them from here."""


class BaseEvent(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """Carry what every event has: who published it and its place in that publisher's stream.

    ``source`` names the publisher (``"env_runner:0"``, ``"algorithm"``); ``seq`` counts that
    publisher's events from 0 without gaps. Subclasses add the hook's data; new fields always get
    defaults and existing field types never change, so old recordings keep decoding.
    """

    hook: ClassVar[str]
    live_args: ClassVar[tuple[str, ...]] = ()
    """The keyword arguments besides ``event`` that the hook's handlers receive, in order:
    the live objects its publisher passes (None where it has none)."""
    optional_live_args: ClassVar[frozenset[str]] = frozenset()
    """Those of ``live_args`` added after the hook was first published: a handler gets one
    only if it names it or takes ``**kwargs``."""
    accepts_control: ClassVar[bool] = False
    """Whether a handler may return a ``kernel.Control`` (a stop, a checkpoint, ...)."""

    source: str = ""
    seq: int = 0

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Defining an event type registers it (``_registry``), once msgspec has applied its
        # class options: they are not set yet here, so the class is only noted now. Its
        # hook name needs none of them: one not given in the class body derives from its name.
        super().__init_subclass__(**kwargs)
        if "hook" not in cls.__dict__:
            cls.hook = hook_name_of(cls.__name__)
        DEFINED.append(cls)


_EPISODE_ARGS = ("episode", "env_runner", "metrics_logger", "env", "rl_module", "env_index")

_LEARNER_ARGS = ("algorithm", "learner", "module", "batch", "metrics_logger")

# --- Algorithm side -------------------------------------------------------------------------


class AlgorithmInit(BaseEvent, frozen=True, kw_only=True, tag="algorithm_init"):
    """Publish after the Algorithm was constructed and set up."""

    hook: ClassVar[str] = "on_algorithm_init"
    live_args: ClassVar[tuple[str, ...]] = ("algorithm", "metrics_logger")

    algorithm: str = ""
    """The Algorithm's class name, e.g. ``"PPO"``."""


class TrainResult(BaseEvent, frozen=True, kw_only=True, tag="train_result"):
    """Publish after each training iteration, before ``train()`` returns."""

    hook: ClassVar[str] = "on_train_result"
    live_args: ClassVar[tuple[str, ...]] = ("algorithm", "metrics_logger", "result", "draft")
    optional_live_args: ClassVar[frozenset[str]] = frozenset({"draft"})
    accepts_control: ClassVar[bool] = True

    training_iteration: int = 0
    result: dict[str, Any] = msgspec.field(default_factory=dict)


class EvaluateStart(BaseEvent, frozen=True, kw_only=True, tag="evaluate_start"):
    """Publish before an evaluation round."""

    hook: ClassVar[str] = "on_evaluate_start"
    live_args: ClassVar[tuple[str, ...]] = ("algorithm", "metrics_logger")

    training_iteration: int = 0


class EvaluateEnd(BaseEvent, frozen=True, kw_only=True, tag="evaluate_end"):
    """Publish after an evaluation round, with its metrics."""

    hook: ClassVar[str] = "on_evaluate_end"
    live_args: ClassVar[tuple[str, ...]] = ("algorithm", "metrics_logger", "evaluation_metrics")
    accepts_control: ClassVar[bool] = True

    training_iteration: int = 0
    evaluation_metrics: dict[str, Any] = msgspec.field(default_factory=dict)


class CheckpointLoaded(BaseEvent, frozen=True, kw_only=True, tag="checkpoint_loaded"):
    """Publish after ``restore_from_path()`` loaded an Algorithm's state."""

    hook: ClassVar[str] = "on_checkpoint_loaded"
    live_args: ClassVar[tuple[str, ...]] = ("algorithm", "metrics_logger")

    path: str = ""


class EnvRunnersRecreated(BaseEvent, frozen=True, kw_only=True, tag="env_runners_recreated"):
    """Publish after failed EnvRunners were restarted."""

    hook: ClassVar[str] = "on_env_runners_recreated"
    live_args: ClassVar[tuple[str, ...]] = (
        "algorithm",
        "env_runner_group",
        "env_runner_indices",
        "is_evaluation",
    )

    env_runner_indices: list[int] = msgspec.field(default_factory=list)
    is_evaluation: bool = False


class EvaluateOfflineStart(BaseEvent, frozen=True, kw_only=True, tag="evaluate_offline_start"):
    """Publish before an offline evaluation round (RLlib's; hookbus's Algorithm has none)."""

    hook: ClassVar[str] = "on_evaluate_offline_start"
    live_args: ClassVar[tuple[str, ...]] = ("algorithm", "metrics_logger")

    training_iteration: int = 0


class EvaluateOfflineEnd(BaseEvent, frozen=True, kw_only=True, tag="evaluate_offline_end"):
    """Publish after an offline evaluation round, with its metrics (RLlib's)."""

    hook: ClassVar[str] = "on_evaluate_offline_end"
    live_args: ClassVar[tuple[str, ...]] = ("algorithm", "metrics_logger", "evaluation_metrics")

    training_iteration: int = 0
    evaluation_metrics: dict[str, Any] = msgspec.field(default_factory=dict)


class OfflineEvalRunnersRecreated(
    BaseEvent, frozen=True, kw_only=True, tag="offline_eval_runners_recreated"
):
    """Publish after failed offline evaluation runners were restarted (RLlib's)."""

    hook: ClassVar[str] = "on_offline_eval_runners_recreated"
    live_args: ClassVar[tuple[str, ...]] = ("algorithm", "env_runner_group", "env_runner_indices")

    env_runner_indices: list[int] = msgspec.field(default_factory=list)


class RecordingGap(BaseEvent, frozen=True, kw_only=True, tag="recording_gap"):
    """Mark where a recording lost a source's events: a runner lost before they were taken.

    Written (and published) by the process writing the recording where it noticed the
    loss (the RLlib bridge's driver), under a source of its own (``"recorder"``).
    ``lost_source``'s events from ``first_lost_seq`` up to its next one in the file (if
    any) are not in the recording.
    """

    hook: ClassVar[str] = "on_recording_gap"
    live_args: ClassVar[tuple[str, ...]] = ("algorithm",)

    lost_source: str = ""
    """The source whose events are missing (``"env_runner:2"``)."""
    first_lost_seq: int = 0
    """That source's seq after the last one recorded before the gap (0 if none was)."""
    training_iteration: int = 0
    """The ``training_iteration`` of the ``TrainResult`` (or ``EvaluateEnd``) at which the
    events were to be taken."""
    reason: str = ""
    """What happened, in words: the runner did not answer, or it started a new numbering."""


_MODULE_ID = "default_policy"
"""The id of the single module hookbus's learners train (RLlib's ``DEFAULT__MODULE_ID``)."""


class LearnerUpdateStart(BaseEvent, frozen=True, kw_only=True, tag="learner_update_start"):
    """Publish before each learner update, on the event loop (the update runs in a thread).

    A handler may still change the learner (``learner.lr = ...``): the update reads it.
    """

    hook: ClassVar[str] = "on_learner_update_start"
    live_args: ClassVar[tuple[str, ...]] = _LEARNER_ARGS

    training_iteration: int = 0
    """The iteration in progress: the ``training_iteration`` its ``train()`` result reports."""
    module_id: str = _MODULE_ID
    batch_size: int = 0
    """Rows in the update's batch: env steps for PPO, replayed transitions for DQN."""
    update_index: int = 0
    """The update's number within its iteration, from 0 (DQN updates several times)."""


class LearnerUpdateEnd(BaseEvent, frozen=True, kw_only=True, tag="learner_update_end"):
    """Publish after each learner update, with the stats it returned (plain floats)."""

    hook: ClassVar[str] = "on_learner_update_end"
    live_args: ClassVar[tuple[str, ...]] = _LEARNER_ARGS

    training_iteration: int = 0
    module_id: str = _MODULE_ID
    batch_size: int = 0
    update_index: int = 0
    stats: dict[str, float] = msgspec.field(default_factory=dict)
    """What ``learner.update()`` returned: ``policy_loss``, ``qf_loss``, gradient norm, ..."""


# --- EnvRunner side -------------------------------------------------------------------------


class AgentData(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One agent's part of a multi-agent env's reset or step (``MultiAgentEpisode``).

    A field is UNSET (and not encoded) when the env's dict had no entry for the agent: no
    observation (not its turn), no action (it did not act), no reward. ``module_id`` is the
    module acting for the agent. Agent ids are ``str`` or ``int``, as a recording keeps them.
    """

    agent_id: str | int
    module_id: str = ""
    observation: Any | UnsetType = UNSET
    action: Any | UnsetType = UNSET
    reward: float | UnsetType = UNSET
    terminated: bool | UnsetType = UNSET
    truncated: bool | UnsetType = UNSET
    info: dict[str, Any] | UnsetType = UNSET


class EnvironmentCreated(BaseEvent, frozen=True, kw_only=True, tag="environment_created"):
    """Publish after an EnvRunner made its (vector) environment."""

    hook: ClassVar[str] = "on_environment_created"
    live_args: ClassVar[tuple[str, ...]] = ("env_runner", "metrics_logger", "env", "env_context")

    env_id: str = ""
    num_envs: int = 1
    worker_index: int = 0
    in_evaluation: bool = False
    env_config: dict[str, Any] = msgspec.field(default_factory=dict)


class EpisodeCreated(BaseEvent, frozen=True, kw_only=True, tag="episode_created"):
    """Publish for every new episode object, before its sub-env is reset."""

    hook: ClassVar[str] = "on_episode_created"
    live_args: ClassVar[tuple[str, ...]] = _EPISODE_ARGS

    episode_id: str = ""
    env_index: int = 0
    multi_agent: bool = False
    """Whether the episode is a ``MultiAgentEpisode`` (replay builds the same class)."""


class EpisodeStart(BaseEvent, frozen=True, kw_only=True, tag="episode_start"):
    """Publish after the reset, once the first observation is in the episode."""

    hook: ClassVar[str] = "on_episode_start"
    live_args: ClassVar[tuple[str, ...]] = _EPISODE_ARGS

    episode_id: str = ""
    env_index: int = 0
    observation: Any = None
    info: dict[str, Any] = msgspec.field(default_factory=dict)
    agents: list[AgentData] | None = None
    """Multi-agent episodes only: each agent's observation and info from the reset."""


class EpisodeStep(BaseEvent, frozen=True, kw_only=True, omit_defaults=True, tag="episode_step"):
    """Publish after each env step is in the episode, the step that ends it included.

    As in RLlib, an episode of N steps publishes N of these; on the last one ``terminated``
    or ``truncated`` is True (as on the episode by then), and ``on_episode_end`` follows.
    """

    hook: ClassVar[str] = "on_episode_step"
    live_args: ClassVar[tuple[str, ...]] = _EPISODE_ARGS
    accepts_control: ClassVar[bool] = True

    episode_id: str = ""
    env_index: int = 0
    action: Any = None
    reward: float = 0.0
    observation: Any = None
    info: dict[str, Any] = msgspec.field(default_factory=dict)
    terminated: bool = False
    truncated: bool = False
    agents: list[AgentData] | None = None
    """Multi-agent episodes only: what the env's dicts held for each agent at this step
    (``action``, ``reward``, ... stay None/default; ``terminated`` and ``truncated`` are
    ``"__all__"``'s)."""


class EpisodeEnd(BaseEvent, frozen=True, kw_only=True, tag="episode_end"):
    """Publish once an episode terminated or was truncated, after its last ``EpisodeStep``.

    The last step's data is in that ``EpisodeStep``; this event only says how it ended.
    """

    hook: ClassVar[str] = "on_episode_end"
    live_args: ClassVar[tuple[str, ...]] = _EPISODE_ARGS
    accepts_control: ClassVar[bool] = True

    episode_id: str = ""
    env_index: int = 0
    terminated: bool = False
    truncated: bool = False
    ended_early: bool = False
    """An ``on_episode_step`` handler asked to end the episode (``Control.end_episode``):
    it ends truncated after that step, whose own flags were still False."""


class SampleEnd(BaseEvent, frozen=True, kw_only=True, tag="sample_end"):
    """Publish at the end of each ``sample()`` call."""

    hook: ClassVar[str] = "on_sample_end"
    live_args: ClassVar[tuple[str, ...]] = ("env_runner", "metrics_logger", "samples")
    accepts_control: ClassVar[bool] = True

    num_env_steps: int = 0
    episode_ids: list[str] = msgspec.field(default_factory=list)


class PostprocessTrajectory(BaseEvent, frozen=True, kw_only=True, tag="postprocess_trajectory"):
    """Publish after ``on_episode_end``, before the episode goes to the learner."""

    hook: ClassVar[str] = "on_postprocess_trajectory"
    live_args: ClassVar[tuple[str, ...]] = ("episode", "env_runner", "metrics_logger")

    episode_id: str = ""
    env_index: int = 0


Event = (
    AlgorithmInit
    | TrainResult
    | EvaluateStart
    | EvaluateEnd
    | CheckpointLoaded
    | EnvRunnersRecreated
    | LearnerUpdateStart
    | LearnerUpdateEnd
    | EnvironmentCreated
    | EpisodeCreated
    | EpisodeStart
    | EpisodeStep
    | EpisodeEnd
    | SampleEnd
    | PostprocessTrajectory
    | EvaluateOfflineStart
    | EvaluateOfflineEnd
    | OfflineEvalRunnersRecreated
    | RecordingGap
)
"""Any event: decode a mixed stream with ``type=Event``; ``isinstance(x, Event)`` works too."""

HOOKS: dict[str, type[BaseEvent]] = {cls.hook: cls for cls in Event.__args__}
"""Hook name (``"on_episode_step"``) to its event type (``EpisodeStep``), in SPEC.md's order."""
