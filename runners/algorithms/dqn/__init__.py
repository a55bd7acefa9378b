"""DQN: its learner (numpy), replay buffers, n-step transitions, Algorithm and config."""
