export * from '@offshoot/client/testkit';
