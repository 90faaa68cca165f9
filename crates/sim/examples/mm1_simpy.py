"""M/M/1 in SimPy, for `cargo xtask bench`: the same queue as the engine's M/M/1-like config
(utilisation 0.9, mean service 1 s), written the way SimPy's own examples write it.

    python3 mm1_simpy.py CUSTOMERS  ->  prints "CUSTOMERS SECONDS MEAN_SOJOURN_S"
"""

import random
import sys
import time

import simpy


def main() -> None:
    customers = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    rng = random.Random(42)
    env = simpy.Environment()
    server = simpy.Resource(env, capacity=1)
    sojourn = []

    def customer(env):
        arrived = env.now
        with server.request() as req:
            yield req
            yield env.timeout(rng.expovariate(1.0))
        sojourn.append(env.now - arrived)

    def source(env):
        for _ in range(customers):
            env.process(customer(env))
            yield env.timeout(rng.expovariate(0.9))

    env.process(source(env))
    started = time.perf_counter()
    env.run()
    elapsed = time.perf_counter() - started
    print(customers, elapsed, sum(sojourn) / len(sojourn))


if __name__ == "__main__":
    main()
