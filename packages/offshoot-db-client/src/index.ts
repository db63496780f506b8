export * from '@offshoot/client';
