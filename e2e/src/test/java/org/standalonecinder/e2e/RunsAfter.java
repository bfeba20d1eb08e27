package org.standalonecinder.e2e;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The class starts only once every class named here has finished (or is not part of this run).
 *
 * <p>The suite runs its classes one after another, in their {@code @Order}; a class that spends
 * minutes waiting on Kubernetes runs beside them instead ({@code @Execution(CONCURRENT)}, which
 * JUnit starts when the run starts). This says where such a class may begin (after the classes
 * whose parts it would disturb) and, on the classes that must not meet it (they kill a part it
 * needs, or read what the whole suite did), that they wait for it. It waits in a callback that runs
 * before any parameter is resolved, so a waiting class makes nothing (not even the suite's
 * installation) before its turn.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@ExtendWith(SuiteProgress.Gate.class)
@interface RunsAfter {

  /** The classes to wait for. */
  Class<?>[] value();
}
