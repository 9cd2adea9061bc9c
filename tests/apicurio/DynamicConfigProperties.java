package hoodie.tests.apicurio;

import io.apicurio.common.apps.config.DynamicConfigPropertyList;

import javax.enterprise.context.ApplicationScoped;
import javax.enterprise.inject.Produces;
import java.util.List;

/**
 * The list of the registry's settings that can change at run time, which Apicurio's config-index extension
 * fills at build time; that extension's build step is not on Maven Central (tests/apicurio.pom.xml leaves it
 * out), so the list is empty: no setting is changed at run time through the registry's admin API.
 */
@ApplicationScoped
public class DynamicConfigProperties {

  @Produces
  @ApplicationScoped
  DynamicConfigPropertyList dynamicConfigProperties() {
    return new DynamicConfigPropertyList(List.of());
  }
}
