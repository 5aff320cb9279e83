"""What Divide & Conquer and its hierarchical extension share: the divided model, the clustering of
the embedding space, the batches drawn per cluster and their preconditions."""
