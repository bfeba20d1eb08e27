package org.standalonecinder.e2e;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.standalonecinder.demo.LocalInstall;

/**
 * Gives tests the {@link LocalInstall} of the run ({@link Installation}, made once for the whole
 * run (in the root context's store, so it is closed, its processes stopped, when the last test
 * class is done).
 */
final class Installed implements ParameterResolver {

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == LocalInstall.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return context
        .getRoot()
        .getStore(ExtensionContext.Namespace.GLOBAL)
        .getOrComputeIfAbsent(
            Installation.class,
            k -> {
              try {
                return new Installation();
              } catch (Exception e) {
                throw new IllegalStateException("cannot install the project: " + e.getMessage(), e);
              }
            },
            Installation.class)
        .install;
  }
}
