package dev.fcap.spring.demo;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A new Spring Boot application, as the README shows it: the starter, two properties, one annotation. */
@SpringBootApplication
public class SmsApplication {
}
