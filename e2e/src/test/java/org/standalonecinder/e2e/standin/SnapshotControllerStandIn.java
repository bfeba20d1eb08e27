package org.standalonecinder.e2e.standin;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A stand-in for the cluster's snapshot-controller (kubernetes-csi/external-snapshotter's common
 * controller), in the e2e tests only: it does for the suite what the real one does for snapshots of
 * volumes that are not CSI, and nothing more ({@link Rule}s; docs/testing.md says which behaviour
 * of v4.2.1 each follows). No code of that project is in it. It runs in its own threads against the
 * real API server, as the real one ran beside the tests: the provisioner meets it only through
 * Kubernetes objects. Its events name {@value StandInWrites#COMPONENT} as their source.
 */
public final class SnapshotControllerStandIn implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(SnapshotControllerStandIn.class);

  /** The real one's {@code --resync-period} default. */
  static final Duration RESYNC = Duration.ofMinutes(15);

  /** Workers a queue; the real one's ten mostly wait on its client's 5 requests a second. */
  static final int WORKERS = 2;

  private final KubernetesClient client;
  private final Set<Rule> on;
  private final KeyQueue snapshotQueue = new KeyQueue("snapshots");
  private final KeyQueue contentQueue = new KeyQueue("contents");
  private final StandInWrites writes;
  private final List<SharedIndexInformer<GenericKubernetesResource>> informers = new ArrayList<>();
  private final List<Thread> workers = new ArrayList<>();
  private SharedIndexInformer<GenericKubernetesResource> snapshots;
  private SharedIndexInformer<GenericKubernetesResource> contents;
  private SharedIndexInformer<GenericKubernetesResource> classes;
  private volatile boolean running;

  private SnapshotControllerStandIn(KubernetesClient client, Set<Rule> off) {
    this.client = client;
    this.on = EnumSet.allOf(Rule.class);
    this.on.removeAll(off);
    this.writes = new StandInWrites(client, snapshotQueue::add);
  }

  /**
   * Starts it: informers listed once (or a failure after {@code timeout}), then the workers.
   *
   * @param off rules left out for this run (none in the suite's own runs)
   */
  public static SnapshotControllerStandIn start(
      KubernetesClient client, Set<Rule> off, Duration timeout) {
    SnapshotControllerStandIn it = new SnapshotControllerStandIn(client, off);
    try {
      it.startInformers(timeout);
    } catch (RuntimeException e) {
      it.close();
      throw e;
    }
    it.running = true;
    for (int i = 0; i < WORKERS; i++) {
      it.worker("snapshots-" + i, it.snapshotQueue, it::syncSnapshot);
      it.worker("contents-" + i, it.contentQueue, it::syncContent);
    }
    LOG.info(
        "snapshot-controller stand-in started ({} of {} rules{})",
        it.on.size(),
        Rule.values().length,
        off.isEmpty() ? "" : "; off: " + off);
    return it;
  }

  /** Whether it runs: started, not closed, and every worker alive. */
  public boolean running() {
    return running && workers.stream().allMatch(Thread::isAlive);
  }

  private void startInformers(Duration timeout) {
    contents =
        inform(
            StandInWrites.CONTENTS,
            false,
            c -> c.getMetadata().getName(),
            contentQueue::add,
            this::contentGone);
    snapshots =
        inform(
            StandInWrites.SNAPSHOTS,
            true,
            SnapshotControllerStandIn::key,
            snapshotQueue::add,
            this::snapshotGone);
    classes = inform(StandInWrites.CLASSES, false, null, null, null);
    long end = System.nanoTime() + timeout.toNanos();
    for (var i : informers) {
      while (!i.hasSynced()) {
        if (System.nanoTime() > end) {
          throw new IllegalStateException(
              "snapshot-controller stand-in: the snapshot API's informers did not list within "
                  + timeout.toSeconds()
                  + " s (are the snapshot CRDs installed? dev/kube-local/start.sh --snapshots)");
        }
        sleep(Duration.ofMillis(100));
      }
    }
  }

  private SharedIndexInformer<GenericKubernetesResource> inform(
      io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext type,
      boolean namespaced,
      Function<GenericKubernetesResource, String> key,
      Consumer<String> changed,
      Consumer<GenericKubernetesResource> gone) {
    var resources = client.genericKubernetesResources(type);
    SharedIndexInformer<GenericKubernetesResource> i =
        (namespaced ? resources.inAnyNamespace() : resources).runnableInformer(RESYNC.toMillis());
    // client-go's reflector lists and watches again after any failure, the first list's too; so
    // does the stand-in (a killed API server must not stop it for the rest of the run).
    i.exceptionHandler(
        (started, t) -> {
          LOG.warn(
              "snapshot-controller stand-in: {} informer: {}; listing again",
              type.getPlural(),
              t.toString());
          return true;
        });
    if (changed != null) {
      i.addEventHandler(
          new ResourceEventHandler<>() {
            @Override
            public void onAdd(GenericKubernetesResource obj) {
              changed.accept(key.apply(obj));
            }

            @Override
            public void onUpdate(GenericKubernetesResource old, GenericKubernetesResource obj) {
              changed.accept(key.apply(obj));
            }

            @Override
            public void onDelete(GenericKubernetesResource obj, boolean unknown) {
              changed.accept(key.apply(obj));
              gone.accept(obj);
            }
          });
    }
    informers.add(i);
    i.start();
    return i;
  }

  private static String key(GenericKubernetesResource r) {
    return r.getMetadata().getNamespace() + "/" + r.getMetadata().getName();
  }

  /** {@code deleteSnapshot}: the content it was bound to is looked at again. */
  private void snapshotGone(GenericKubernetesResource r) {
    String bound = Snap.of(r).boundContentName();
    if (bound != null) {
      contentQueue.add(bound);
    }
  }

  /** {@code deleteContent}: the snapshot its ref names is looked at again. */
  private void contentGone(GenericKubernetesResource r) {
    SnapContent c = SnapContent.of(r);
    if (c.refName() != null) {
      snapshotQueue.add(c.refKey());
    }
  }

  private void worker(String name, KeyQueue queue, Function<String, String> sync) {
    Thread t =
        new Thread(
            () -> {
              while (running) {
                String key;
                try {
                  key = queue.take();
                } catch (InterruptedException e) {
                  return;
                }
                if (key == null) {
                  return;
                }
                String failed = "not looked at";
                try {
                  failed = sync.apply(key);
                } catch (KubernetesClientException e) {
                  failed = "HTTP " + e.getCode() + ": " + e.getMessage();
                } catch (RuntimeException e) {
                  failed = e.toString();
                  LOG.warn("snapshot-controller stand-in: {} failed", key, e);
                } finally {
                  // Even after an Error, the key is let go (and retried): never stuck as in work.
                  if (failed != null) {
                    LOG.debug(
                        "snapshot-controller stand-in: {}: {}; again after a backoff", key, failed);
                  }
                  queue.done(key, failed != null);
                }
              }
            },
            "snapshot-controller-stand-in-" + name);
    t.setDaemon(true);
    workers.add(t);
    t.start();
  }

  /** One look at a snapshot: what failed (to retry), or null. */
  private String syncSnapshot(String key) {
    int slash = key.indexOf('/');
    GenericKubernetesResource fresh =
        writes.snapshot(key.substring(0, slash), key.substring(slash + 1));
    if (fresh == null) {
      return null;
    }
    return writes.take(SnapshotRules.sync(Snap.of(fresh), world, on));
  }

  private String syncContent(String name) {
    GenericKubernetesResource r = contents.getStore().getByKey(name);
    if (r == null) {
      return null;
    }
    return writes.take(ContentRules.sync(SnapContent.of(r), world, on));
  }

  private final World world =
      new World() {
        @Override
        public Snap snapshot(String namespace, String name) {
          var r = snapshots.getStore().getByKey(namespace + "/" + name);
          return r == null ? null : Snap.of(r);
        }

        @Override
        public List<Snap> snapshotsIn(String namespace) {
          return snapshots.getIndexer().byIndex(Cache.NAMESPACE_INDEX, namespace).stream()
              .map(Snap::of)
              .toList();
        }

        @Override
        public SnapContent content(String name) {
          var r = contents.getStore().getByKey(name);
          return r == null ? null : SnapContent.of(r);
        }

        @Override
        public boolean classExists(String name) {
          return classes.getStore().getByKey(name) != null;
        }

        @Override
        public PersistentVolumeClaim claim(String namespace, String name) {
          // fabric8 cannot look up an empty name; the real one's lister finds nothing.
          if (name == null || name.isEmpty()) {
            return null;
          }
          return client.persistentVolumeClaims().inNamespace(namespace).withName(name).get();
        }

        @Override
        public List<PersistentVolumeClaim> claimsIn(String namespace) {
          return client.persistentVolumeClaims().inNamespace(namespace).list().getItems();
        }

        @Override
        public PersistentVolume volume(String name) {
          return client.persistentVolumes().withName(name).get();
        }
      };

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  @Override
  public void close() {
    running = false;
    snapshotQueue.close();
    contentQueue.close();
    informers.forEach(SharedIndexInformer::close);
    workers.forEach(Thread::interrupt);
    LOG.info("snapshot-controller stand-in stopped");
  }
}
