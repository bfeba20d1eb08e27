package org.standalonecinder.e2e;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.CinderDecorator;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.controller.ClaimController;
import org.standalonecinder.provisioner.controller.EventRecorder;
import org.standalonecinder.provisioner.controller.RetryPolicy;
import org.standalonecinder.provisioner.mapping.VolumeMappers;
import org.standalonecinder.provisioner.provision.KubernetesSecretStore;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;
import org.standalonecinder.provisioner.provision.VolumeProvisioner;

/**
 * A provisioner, in this JVM, that dies right after its n-th step: the n-th call that changes
 * Cinder or the cluster completes, and from then on nothing it sends gets out, as after a SIGKILL
 * (no rollback and no clean-up reaches Cinder or the API server). A provisioner that never dies
 * ({@code dieAfter} 0) lists the steps an operation takes, which is how a test finds every point to
 * die at.
 *
 * <p>Steps are what a kill can separate: Cinder calls that change something, and writes to the API
 * server other than Events (an Event lost with the process changes nothing).
 */
final class MortalProvisioner implements AutoCloseable {

  private static final Set<String> CINDER_WRITES =
      Set.of(
          "createVolume",
          "updateVolumeMetadata",
          "deleteVolume",
          "extendVolume",
          "reserve",
          "unreserve",
          "resetToAvailable",
          "initializeConnection",
          "terminateConnection",
          "createAttachment",
          "completeAttachment",
          "deleteAttachment",
          "createSnapshot",
          "updateSnapshotMetadata",
          "deleteSnapshot",
          "createBackup",
          "updateBackupMetadata",
          "deleteBackup");

  private static final Set<String> KUBE_WRITES = Set.of("POST", "PUT", "PATCH", "DELETE");

  private final int dieAfter;
  private final List<String> steps = new ArrayList<>();
  private final List<String> refusals = new ArrayList<>();
  private final CountDownLatch died = new CountDownLatch(1);
  private final java.util.concurrent.atomic.AtomicInteger conflicts =
      new java.util.concurrent.atomic.AtomicInteger();
  private volatile boolean dead;
  private volatile java.util.function.BiConsumer<String, String> interference;
  private final Set<String> interfered = java.util.concurrent.ConcurrentHashMap.newKeySet();
  private final KubernetesClient client;
  private final ClaimController controller;

  /**
   * Starts a provisioner and returns once its caches are synced.
   *
   * @param cinder the Cinder to use; it stays open
   * @param dieAfter the step after which it dies; 0 for never
   */
  MortalProvisioner(Config kube, CinderClient cinder, ProvisionerSettings settings, int dieAfter) {
    this(kube, cinder, settings, dieAfter, null);
  }

  /**
   * The same, giving volumes no scheduler took {@code schedulingGrace} (null: the provisioner's
   * own) before they are replaced.
   */
  MortalProvisioner(
      Config kube,
      CinderClient cinder,
      ProvisionerSettings settings,
      int dieAfter,
      Duration schedulingGrace) {
    this.dieAfter = dieAfter;
    client =
        new KubernetesClientBuilder()
            .withConfig(kube)
            .withHttpClientBuilderConsumer(b -> b.addOrReplaceInterceptor("mortal", kubeSide()))
            .build();
    CinderClient side = cinderSide(cinder);
    VolumeProvisioner provisioner =
        new VolumeProvisioner(
                side,
                new KubernetesSecretStore(client),
                VolumeMappers.standard(),
                settings,
                VolumeProvisioner.defaultBackoff())
            .withBackgroundThreads(VolumeProvisioner.BACKGROUND_THREADS);
    var parts =
        org.standalonecinder.provisioner.app.Wiring.build(
            client,
            side,
            schedulingGrace == null
                ? provisioner
                : provisioner.withSchedulingGrace(schedulingGrace),
            settings,
            new EventRecorder(
                client, settings.provisionerName(), "mortal-" + dieAfter, Clock.systemUTC()),
            new RetryPolicy(Duration.ofMillis(200), Duration.ofSeconds(2), 100),
            2,
            Duration.ofSeconds(30),
            new io.micrometer.core.instrument.simple.SimpleMeterRegistry(),
            SNAPSHOT_TIMING);
    controller = parts.controller();
    snapshots = parts.snapshots();
    controller.start();
    snapshots.start();
  }

  /** Snapshots looked at from 200 ms on, late after a minute. */
  private static final org.standalonecinder.provisioner.snapshot.SnapshotController.Timing
      SNAPSHOT_TIMING =
          new org.standalonecinder.provisioner.snapshot.SnapshotController.Timing(
              Duration.ofMinutes(1), Duration.ofMillis(200));

  private final org.standalonecinder.provisioner.snapshot.SnapshotController snapshots;

  /** The steps taken so far, in order. */
  synchronized List<String> steps() {
    return List.copyOf(steps);
  }

  /** How many of its calls the API server refused with 409 Conflict. */
  int conflicts() {
    return conflicts.get();
  }

  /**
   * Makes someone else change each claim between this provisioner's read of it and its first update
   * of it: {@code change} (namespace, name) runs, on another client, just before that PUT is sent,
   * so the PUT carries a stale resourceVersion and meets a 409 for certain. Only the first update
   * of each claim is interfered with, so a retry goes through.
   */
  void interfereWithFirstUpdates(java.util.function.BiConsumer<String, String> change) {
    interference = change;
  }

  /** The claims whose first update was interfered with, as namespace/name. */
  Set<String> interfered() {
    return Set.copyOf(interfered);
  }

  /** Whether it died within the timeout. */
  boolean awaitDeath(Duration timeout) throws InterruptedException {
    return died.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** The Cinder writes Cinder refused (400), which changed nothing and so are not steps. */
  synchronized List<String> refusals() {
    return List.copyOf(refusals);
  }

  private synchronized void refused(String name) {
    refusals.add("cinder " + name);
  }

  private synchronized void step(String name) {
    steps.add(name);
    if (steps.size() == dieAfter) {
      dead = true;
      died.countDown();
    }
  }

  private CinderClient cinderSide(CinderClient cinder) {
    return CinderDecorator.wrap(
        cinder,
        (operation, args, call) -> {
          if (operation.equals("close")) {
            return null;
          }
          if (dead) {
            throw new CinderException.Unavailable("the provisioner is dead", 0, null, null);
          }
          Object result;
          try {
            result = call.proceed();
          } catch (CinderException.BadRequest e) {
            if (CINDER_WRITES.contains(operation)) {
              refused(operation);
            }
            throw e;
          }
          if (CINDER_WRITES.contains(operation)) {
            step("cinder " + operation);
          }
          return result;
        });
  }

  private Interceptor kubeSide() {
    return new Interceptor() {
      @Override
      public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
        if (dead) {
          throw new KubernetesClientException("the provisioner is dead");
        }
        var change = interference;
        String[] parts = request.uri().getPath().split("/");
        // /api/v1/namespaces/<ns>/persistentvolumeclaims/<name>: the claim itself, not its status
        if (change != null
            && request.method().equals("PUT")
            && parts.length == 7
            && parts[5].equals("persistentvolumeclaims")
            && interfered.add(parts[4] + "/" + parts[6])) {
          try {
            change.accept(parts[4], parts[6]);
          } catch (RuntimeException e) {
            // the claim is gone or the change failed: the PUT meets whatever it meets
          }
        }
      }

      @Override
      public void after(
          HttpRequest request,
          HttpResponse<?> response,
          AsyncBody.Consumer<List<ByteBuffer>> consumer) {
        String path = request.uri().getPath();
        if (response.code() == 409) {
          conflicts.incrementAndGet();
        }
        if (KUBE_WRITES.contains(request.method())
            && response.code() < 300
            && !path.contains("/events")) {
          step("kube " + request.method() + " " + resource(path));
        }
      }
    };
  }

  /**
   * {@code /api/v1/namespaces/ns/persistentvolumeclaims/x/status} → {@code
   * persistentvolumeclaims/status}.
   */
  private static String resource(String path) {
    List<String> parts = new ArrayList<>(List.of(path.split("/")));
    int v = parts.indexOf("v1");
    if (v < 0) {
      return path;
    }
    List<String> rest = parts.subList(v + 1, parts.size());
    if (rest.size() >= 2 && rest.get(0).equals("namespaces")) {
      rest = rest.subList(2, rest.size());
    }
    if (rest.isEmpty()) {
      return path;
    }
    return rest.size() == 3 ? rest.get(0) + "/" + rest.get(2) : rest.get(0);
  }

  @Override
  public void close() {
    snapshots.close();
    controller.close();
    client.close();
  }
}
