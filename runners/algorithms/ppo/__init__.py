"""PPO: its learner (numpy) and its Algorithm and config."""
