package org.standalonecinder.provisioner.cinder;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

/**
 * The one way to wrap a {@link CinderClient}: every call of the interface passes through an {@link
 * Interceptor}, so a wrapper (metrics, fault injection, a test's gate) is a few lines and never
 * repeats the interface's methods; a method added to the interface is wrapped at once.
 */
public final class CinderDecorator {

  private CinderDecorator() {}

  /** What a wrapper does around one call of the wrapped client. */
  @FunctionalInterface
  public interface Interceptor {
    /**
     * @param operation the method's name, e.g. {@code createVolume}
     * @param args the call's arguments (empty, never null)
     * @param call makes the call on the wrapped client; its failure is thrown as it was
     * @return what the call returns (null for a void method)
     */
    Object around(String operation, Object[] args, Call call);
  }

  /** The wrapped call. */
  @FunctionalInterface
  public interface Call {
    Object proceed();
  }

  /** {@code inner} with every call passing through {@code interceptor}. */
  public static CinderClient wrap(CinderClient inner, Interceptor interceptor) {
    return (CinderClient)
        Proxy.newProxyInstance(
            CinderClient.class.getClassLoader(),
            new Class<?>[] {CinderClient.class},
            (proxy, method, args) -> {
              if (method.getDeclaringClass() == Object.class) {
                return objectMethod(proxy, method, args, inner);
              }
              Object[] a = args == null ? new Object[0] : args;
              return interceptor.around(method.getName(), a, () -> invoke(inner, method, a));
            });
  }

  private static Object invoke(CinderClient inner, Method method, Object[] args) {
    try {
      return method.invoke(inner, args);
    } catch (InvocationTargetException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException r) {
        throw r;
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(cause);
    } catch (IllegalAccessException e) {
      throw new IllegalStateException(e);
    }
  }

  private static Object objectMethod(Object proxy, Method method, Object[] args, Object inner) {
    return switch (method.getName()) {
      case "equals" -> proxy == args[0];
      case "hashCode" -> System.identityHashCode(proxy);
      default -> "decorated " + inner;
    };
  }
}
