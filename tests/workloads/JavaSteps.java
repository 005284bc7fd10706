// SPDX-License-Identifier: GPL-2.0
/*
 * A JVM's job to checkpoint (vm-tests/tests/jvm.sh): two threads take
 * STEPS paced steps each, folding numbers into a state of their own and
 * into a map on the heap they share; READY is made once both run; the
 * line printed at the end depends only on STEPS. Java because a JVM is
 * what many cluster jobs are (bioinformatics pipelines, Spark): some
 * twenty threads of its own, a heap reserved large and touched in part,
 * and the hsperfdata file it maps, flock()s and closes.
 *
 * java -cp DIR JavaSteps STEPS READY PACE_MS
 */
import java.io.File;
import java.util.concurrent.ConcurrentHashMap;

public class JavaSteps {
	public static void main(String[] args) throws Exception {
		final int steps = Integer.parseInt(args[0]);
		final long pace = Long.parseLong(args[2]);
		final ConcurrentHashMap<Integer, Long> map = new ConcurrentHashMap<>();
		final long[] state = new long[2];
		Thread[] workers = new Thread[2];

		for (int w = 0; w < 2; w++) {
			final int id = w;
			workers[w] = new Thread(() -> {
				long s = id + 1;
				for (int i = 0; i < steps; i++) {
					for (int k = 0; k < 20000; k++)
						s = s * 6364136223846793005L + k;
					map.merge(i % 512, s, (a, b) -> a ^ b);
					try {
						Thread.sleep(pace);
					} catch (InterruptedException e) {
						return;
					}
				}
				state[id] = s;
			}, "worker-" + w);
			workers[w].start();
		}
		new File(args[1]).createNewFile();
		for (Thread t : workers)
			t.join();
		long sum = state[0] ^ state[1];
		for (int i = 0; i < 512; i++)
			sum = sum * 31 + map.getOrDefault(i, 0L);
		System.out.println("steps " + steps + " sum " + Long.toHexString(sum));
	}
}
