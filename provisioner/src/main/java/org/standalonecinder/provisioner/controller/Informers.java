package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.client.informers.SharedIndexInformer;

/** What every informer of the provisioner shares. */
public final class Informers {

  private Informers() {}

  /**
   * The informer lists and watches again after any failure once it has started, with fabric8's
   * backoff, until it is closed — as client-go's reflector does. fabric8's default stops an
   * informer for good when a watch ends in an error it does not expect (an event it cannot read, a
   * protocol error): the cache would then freeze, seeing no new claim or snapshot, while /healthz
   * says ok. A failure of the first list still fails the start: its caller retries or stops.
   *
   * @param informer an informer not yet run
   * @return the same informer
   */
  public static <T> SharedIndexInformer<T> keepWatching(SharedIndexInformer<T> informer) {
    return informer.exceptionHandler((started, failure) -> started);
  }
}
