"""The networks: the observation encoding, the policy network, the afterstate value network, model directories."""
