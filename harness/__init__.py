"""What the tests and benchmarks run the product with, outside the wheel (#39):
a fleet of bot processes behind the webhook proxy (:mod:`harness.fleet`), the
soaks over it (:mod:`harness.soak`, :mod:`harness.failover_soak`) and a
throw-away Redis Cluster (:mod:`harness.local_cluster`).  The product's packages
never import it (the ``harness-outside`` contract); it imports theirs."""
