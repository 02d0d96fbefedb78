package bench;

import io.confluent.parallelconsumer.ParallelConsumerOptions;
import io.confluent.parallelconsumer.ParallelConsumerOptions.ProcessingOrder;
import io.confluent.parallelconsumer.ParallelStreamProcessor;
import io.confluent.parallelconsumer.internal.DrainingCloseable.DrainingMode;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Confluent Parallel Consumer over a topic of "key:seq" values, for the kafka benchmark: KEY ordering,
 * a handler that sleeps 1 ms on PC's thread pool, per-key order checked. Prints one JSON line when it
 * has handled every message: {"rate": msgs/s from the first handled message to the last, "violations": n}
 * (and "cold": the first warm-up pass's rate, with --warm-ups).
 *
 * <p>Arguments: --bootstrap host:port --topic t --group g --max-concurrency n --messages n --keys n
 * [--batch-size n] [--warm-ups n] [--log file] [--kill-point n]. With --warm-ups, the JVM first reads
 * the whole topic n times unmeasured, each time in a group of its own (the group's name and
 * "-warm-up-<i>"), and measures the pass after them. With --batch-size (PC's batchSize, default 1), the
 * handler gets up to n records per call and sleeps 1 ms per call whatever their number. With --log,
 * each handled message is appended to the file as "key:seq" before the next is recorded (unbuffered,
 * so a SIGKILL loses none), messages already in the file count as handled, and "kill-point" is printed
 * once this process has handled --kill-point messages.
 */
public final class ParallelConsumerBench {
  public static void main(String[] argv) throws Exception {
    Map<String, String> args = parse(argv);
    int messages = Integer.parseInt(args.get("messages"));
    int keys = Integer.parseInt(args.get("keys"));
    // A JVM runs its first pass mostly interpreted: the passes that warm it up are not measured.
    int warmUps = Integer.parseInt(args.getOrDefault("warm-ups", "0"));
    String cold = "";
    for (int i = 0; i < warmUps; i++) {
      Tally warmUp = new Tally(messages, keys, null, 0);
      ParallelStreamProcessor<String, String> pc = consume(args, args.get("group") + "-warm-up-" + i, warmUp);
      warmUp.awaitAll();
      if (i == 0) cold = ",\"cold\":" + warmUp.rate();
      pc.close(Duration.ofSeconds(10), DrainingMode.DONT_DRAIN);
    }
    Tally tally = new Tally(messages, keys, args.get("log"), Integer.parseInt(args.getOrDefault("kill-point", "0")));
    consume(args, args.get("group"), tally);
    tally.awaitAll();
    System.out.println("{\"rate\":" + tally.rate() + ",\"violations\":" + tally.violations + cold + "}");
    System.out.flush();
    // Closing drains and commits, which the measurement does not need; exiting leaves the group by timeout.
    Runtime.getRuntime().halt(0);
  }

  /** Parallel Consumer reading the whole topic from the start in `group`, each handled message recorded in `tally`. */
  private static ParallelStreamProcessor<String, String> consume(Map<String, String> args, String group, Tally tally) {
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args.get("bootstrap"));
    props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    // The same group timing as the Node contenders, so a killed member leaves the group as fast.
    props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 10000);
    props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 1000);
    props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());

    ParallelConsumerOptions<String, String> options = ParallelConsumerOptions.<String, String>builder()
        .consumer(new KafkaConsumer<>(props))
        .ordering(ProcessingOrder.KEY)
        .maxConcurrency(Integer.parseInt(args.get("max-concurrency")))
        .batchSize(Integer.parseInt(args.getOrDefault("batch-size", "1")))
        // PC's default is 5 s; the Node receiver commits every 1 s, so both lose the same time to a kill.
        .commitInterval(Duration.ofMillis(1000))
        .build();
    ParallelStreamProcessor<String, String> pc = ParallelStreamProcessor.createEosStreamProcessor(options);
    pc.subscribe(List.of(args.get("topic")));
    pc.poll(context -> {
      try {
        Thread.sleep(1);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      for (var record : context.getConsumerRecordsFlattened()) tally.record(record.value());
    });
    return pc;
  }

  private static Map<String, String> parse(String[] argv) {
    Map<String, String> args = new HashMap<>();
    for (int i = 0; i + 1 < argv.length; i += 2) args.put(argv[i].replaceFirst("^--", ""), argv[i + 1]);
    for (String required : List.of("bootstrap", "topic", "group", "max-concurrency", "messages", "keys"))
      if (!args.containsKey(required)) throw new IllegalArgumentException("missing --" + required);
    return args;
  }

  /** Counts handled messages, checks per-key order and, with a log, appends each handled message to it. */
  private static final class Tally {
    private final int messages;
    private final int killPoint;
    private final int[] next;
    private final Set<String> seen = new HashSet<>();
    private final FileOutputStream log;
    private int handledHere;
    private long first;
    private long last;
    int violations;

    Tally(int messages, int keys, String logFile, int killPoint) throws IOException {
      this.messages = messages;
      this.killPoint = killPoint;
      this.next = new int[keys];
      if (logFile != null) {
        Path path = Path.of(logFile);
        if (Files.exists(path)) seen.addAll(Files.readAllLines(path));
        log = new FileOutputStream(logFile, true);
      } else {
        log = null;
      }
      // After a restart a key resumes wherever its partition was committed: its first seq sets the order.
      java.util.Arrays.fill(next, seen.isEmpty() ? 0 : -1);
    }

    synchronized void record(String value) {
      int colon = value.indexOf(':');
      int key = Integer.parseInt(value, 0, colon, 10);
      int seq = Integer.parseInt(value, colon + 1, value.length(), 10);
      long now = System.nanoTime();
      if (handledHere++ == 0) first = now;
      last = now;
      if (next[key] >= 0 && next[key] != seq) violations++;
      next[key] = seq + 1;
      if (log != null) {
        try {
          log.write((value + "\n").getBytes(StandardCharsets.US_ASCII));
        } catch (IOException e) {
          throw new IllegalStateException(e);
        }
      }
      if (handledHere == killPoint) {
        System.out.println("kill-point");
        System.out.flush();
      }
      seen.add(value);
      if (seen.size() == messages) notifyAll();
    }

    synchronized void awaitAll() throws InterruptedException {
      while (seen.size() < messages) wait();
    }

    synchronized double rate() {
      return handledHere * 1e9 / (last - first);
    }
  }
}
