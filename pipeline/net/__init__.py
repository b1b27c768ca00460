"""The networks: the observation encoding, the policy network, model directories."""
