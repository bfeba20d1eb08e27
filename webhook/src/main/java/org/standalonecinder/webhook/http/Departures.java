package org.standalonecinder.webhook.http;

import io.vertx.ext.web.RoutingContext;
import java.util.ArrayList;
import java.util.List;

/**
 * What runs when a request's client goes away before its answer (its HTTP/2 stream reset, its
 * connection closed). A response has one close handler; every handler of the route that must know
 * registers here instead, on the request's event loop.
 */
final class Departures {

  private static final String KEY = Departures.class.getName();

  private Departures() {}

  /** Runs {@code then} if the request's client leaves before the answer is sent. */
  static void onLeave(RoutingContext ctx, Runnable then) {
    List<Runnable> all = ctx.get(KEY);
    if (all == null) {
      List<Runnable> created = new ArrayList<>(2);
      ctx.put(KEY, created);
      ctx.response().closeHandler(v -> created.forEach(Runnable::run));
      all = created;
    }
    all.add(then);
  }
}
